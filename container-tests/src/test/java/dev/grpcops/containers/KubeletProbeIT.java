package dev.grpcops.containers;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.grpcops.admin.AdminCredentials;
import dev.grpcops.cli.HealthProbe;
import dev.grpcops.proto.whoami.v1.DrainRequest;
import dev.grpcops.proto.whoami.v1.WhoAmIGrpc;
import io.fabric8.kubernetes.api.model.GRPCAction;
import io.fabric8.kubernetes.api.model.apps.Deployment;
import io.fabric8.kubernetes.client.utils.KubernetesSerialization;
import io.grpc.ManagedChannel;
import java.io.IOException;
import java.nio.file.Files;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.testcontainers.containers.GenericContainer;
import org.testcontainers.containers.Network;

/**
 * The probes of k8s/base/whoami.yaml, made the way kubelet makes them, against the real image:
 * draining fails readiness and leaves liveness passing, so the pod leaves the Service and is not
 * restarted. The image's own HEALTHCHECK (what Compose waits for) follows the same state.
 */
class KubeletProbeIT {

    /** Building the image, and starting it within GrpcHealthWait's 4 minutes, on a loaded machine. */
    @Timeout(value = 6, unit = TimeUnit.MINUTES, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
    @Test
    void drainFailsTheManifestsReadinessProbeButNotItsLivenessProbe() throws IOException {
        Docker.requireEngine();
        Deployment whoami = new KubernetesSerialization()
                .unmarshal(
                        Files.readString(Docker.ROOT.resolve("k8s/base/whoami.yaml"))
                                .split("(?m)^---\\s*$")[0],
                        Deployment.class);
        var container = whoami.getSpec().getTemplate().getSpec().getContainers().get(0);
        GRPCAction readiness = container.getReadinessProbe().getGrpc();
        GRPCAction liveness = container.getLivenessProbe().getGrpc();

        Network network = Network.newNetwork();
        GenericContainer<?> pod = ServiceContainers.service(
                        "whoami-service", network, "whoami", readiness.getPort(), readiness.getService())
                .withEnv("POD_NAME", "probe-test");
        try {
            pod.start();
            assertThat(probe(pod, readiness).serving())
                    .as("readiness before the drain")
                    .isTrue();
            assertThat(probe(pod, liveness).serving())
                    .as("liveness before the drain")
                    .isTrue();
            await().atMost(Duration.ofSeconds(30))
                    .untilAsserted(() -> assertThat(dockerHealth(pod))
                            .as("the image's HEALTHCHECK, as Compose sees it")
                            .isEqualTo("healthy"));

            drain(pod, readiness.getPort());

            HealthProbe.Result ready = probe(pod, readiness);
            assertThat(ready.serving()).as("readiness after the drain").isFalse();
            assertThat(ready.message()).isEqualTo("NOT_SERVING");
            assertThat(probe(pod, liveness).serving())
                    .as("liveness after the drain: no restart")
                    .isTrue();
            // Three failed checks 10 s apart; clients have left it already (their health checks see NOT_SERVING).
            await().atMost(Duration.ofSeconds(60))
                    .untilAsserted(() -> assertThat(dockerHealth(pod))
                            .as("the image's HEALTHCHECK after the drain")
                            .isEqualTo("unhealthy"));
        } finally {
            ServiceContainers.removeAll(network, pod);
        }
    }

    private static String dockerHealth(GenericContainer<?> pod) {
        return pod.getCurrentContainerInfo().getState().getHealth().getStatus();
    }

    /** kubelet's grpc probe: Check(service) on the probe's port, within timeoutSeconds (default 1 s). */
    private static HealthProbe.Result probe(GenericContainer<?> pod, GRPCAction action) {
        String service = action.getService() == null ? "" : action.getService();
        return HealthProbe.probe(
                pod.getHost() + ":" + pod.getMappedPort(action.getPort()), service, Duration.ofSeconds(1));
    }

    private static void drain(GenericContainer<?> pod, int port) {
        ManagedChannel channel = ServiceContainers.channel(pod, port);
        try {
            WhoAmIGrpc.newBlockingStub(channel)
                    .withInterceptors(AdminCredentials.bearer(ServiceContainers.ADMIN_TOKEN))
                    .withDeadlineAfter(5, TimeUnit.SECONDS)
                    .drain(DrainRequest.getDefaultInstance());
        } finally {
            channel.shutdownNow();
        }
    }
}
