package dev.grpcops.systemtest;

import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;

/** Three whoami pods, w1..w3, on 127.0.0.2, .3 and .4, one port: what a headless Service lists. */
final class WhoAmIReplicas implements AutoCloseable {

    static final String TOKEN = "system-test-token";

    final List<ServiceProcess> pods = new ArrayList<>();
    final int port;

    WhoAmIReplicas(Map<String, String> extraEnv) {
        port = ServiceProcess.freePort("127.0.0.2");
        try {
            for (int i = 1; i <= 3; i++) {
                Map<String, String> env = new HashMap<>(extraEnv);
                env.put("POD_NAME", "w" + i);
                env.put("GRPCOPS_ADMIN_TOKEN", TOKEN);
                pods.add(ServiceProcess.startAt("whoami-service", "whoami-w" + i, "127.0.0." + (i + 1), port, env));
            }
            pods.forEach(pod -> pod.awaitServing(Duration.ofSeconds(90)));
        } catch (RuntimeException e) {
            close();
            throw e;
        }
    }

    /** The address list a headless Service's DNS name would answer. */
    String addressList() {
        return pods.stream().map(ServiceProcess::target).collect(Collectors.joining(","));
    }

    ServiceProcess pod(String name) {
        return pods.get(Integer.parseInt(name.substring(1)) - 1);
    }

    @Override
    public void close() {
        pods.forEach(ServiceProcess::close);
    }
}
