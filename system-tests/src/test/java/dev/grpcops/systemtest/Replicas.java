package dev.grpcops.systemtest;

import dev.grpcops.admin.AdminCredentials;
import dev.grpcops.proto.fault.v1.FaultSpec;
import dev.grpcops.proto.fault.v1.FaultsGrpc;
import io.grpc.ManagedChannel;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;

/**
 * Three replicas of one service on 127.0.0.2, .3 and .4, one port: the pods a headless Service
 * lists. WhoAmI pods are named w1..w3 (env POD_NAME).
 */
final class Replicas implements AutoCloseable {

    static final String TOKEN = "system-test-token";

    final List<ServiceProcess> pods = new ArrayList<>();
    final int port;

    private Replicas(String module, String prefix, Map<String, String> extraEnv, String... args) {
        port = ServiceProcess.freePort("127.0.0.2", "127.0.0.3", "127.0.0.4");
        try {
            for (int i = 1; i <= 3; i++) {
                Map<String, String> env = new HashMap<>(extraEnv);
                env.put("POD_NAME", prefix + i);
                env.put("GRPCOPS_ADMIN_TOKEN", TOKEN);
                pods.add(ServiceProcess.startAt(
                        module, module + "-" + prefix + i, "127.0.0." + (i + 1), port, env, args));
            }
            pods.forEach(pod -> pod.awaitServing(Duration.ofSeconds(90)));
        } catch (RuntimeException e) {
            close();
            throw e;
        }
    }

    static Replicas whoami(Map<String, String> env, String... args) {
        return new Replicas("whoami-service", "w", env, args);
    }

    static Replicas stock(String... args) {
        return new Replicas("stock-service", "s", Map.of(), args);
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
        ServiceProcess.stopAll(pods);
    }

    /** Sets {@code fault} on {@code pod} through its admin service, with the token every replica gets. */
    static void setFault(ServiceProcess pod, FaultSpec fault) {
        ManagedChannel admin = pod.channel();
        try {
            FaultsGrpc.newBlockingStub(admin)
                    .withInterceptors(AdminCredentials.bearer(TOKEN))
                    .withDeadlineAfter(10, TimeUnit.SECONDS)
                    .set(fault);
        } finally {
            admin.shutdownNow();
        }
    }
}
