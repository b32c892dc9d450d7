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
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * The probes of k8s/base/whoami.yaml, made the way kubelet makes them, against the real image (the
 * Compose suite's whoami-1): draining fails readiness and leaves liveness passing, so the pod leaves
 * the Service and is not restarted. The image's own HEALTHCHECK (what Compose waits for) follows the
 * same state.
 */
@ExtendWith(ComposeSuite.Resolver.class)
@Timeout(value = 3, unit = TimeUnit.MINUTES, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
class KubeletProbeIT {

    private static final String POD = "whoami-1";

    private static ComposeSuite suite;

    @BeforeAll
    @Timeout(value = 12, unit = TimeUnit.MINUTES, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
    static void up(ComposeSuite compose) {
        suite = compose;
    }

    @Test
    void drainFailsTheManifestsReadinessProbeButNotItsLivenessProbe() throws IOException {
        Deployment whoami = new KubernetesSerialization()
                .unmarshal(
                        Files.readString(Docker.ROOT.resolve("k8s/base/whoami.yaml"))
                                .split("(?m)^---\\s*$")[0],
                        Deployment.class);
        var container = whoami.getSpec().getTemplate().getSpec().getContainers().get(0);
        GRPCAction readiness = container.getReadinessProbe().getGrpc();
        GRPCAction liveness = container.getLivenessProbe().getGrpc();
        assertThat(readiness.getPort()).as("the image's gRPC port").isEqualTo(50051);

        try {
            assertThat(probe(readiness).serving())
                    .as("readiness before the drain")
                    .isTrue();
            assertThat(probe(liveness).serving())
                    .as("liveness before the drain")
                    .isTrue();
            await().atMost(Duration.ofSeconds(30))
                    .untilAsserted(() -> assertThat(suite.dockerHealth(POD))
                            .as("the image's HEALTHCHECK, as Compose sees it")
                            .isEqualTo("healthy"));

            admin(WhoAmIGrpc.WhoAmIBlockingStub::drain);

            HealthProbe.Result ready = probe(readiness);
            assertThat(ready.serving()).as("readiness after the drain").isFalse();
            assertThat(ready.message()).isEqualTo("NOT_SERVING");
            assertThat(probe(liveness).serving())
                    .as("liveness after the drain: no restart")
                    .isTrue();
            // Three failed checks (every 2 s in the tests' Compose file; clients have left it already).
            await().atMost(Duration.ofSeconds(60))
                    .untilAsserted(() -> assertThat(suite.dockerHealth(POD))
                            .as("the image's HEALTHCHECK after the drain")
                            .isEqualTo("unhealthy"));
        } finally {
            admin(WhoAmIGrpc.WhoAmIBlockingStub::resume);
        }
        await().atMost(Duration.ofSeconds(60))
                .untilAsserted(() -> assertThat(suite.dockerHealth(POD))
                        .as("the image's HEALTHCHECK after the resume")
                        .isEqualTo("healthy"));
    }

    /**
     * kubelet's grpc probe: Check(service) on the probe's port. kubelet gives it timeoutSeconds
     * (1 s by default); a loaded test machine gets 5 s, since the answer, not the speed, is tested here.
     */
    private static HealthProbe.Result probe(GRPCAction action) {
        String service = action.getService() == null ? "" : action.getService();
        return HealthProbe.probe(suite.address(POD, action.getPort()), service, Duration.ofSeconds(5));
    }

    private static void admin(java.util.function.BiFunction<WhoAmIGrpc.WhoAmIBlockingStub, DrainRequest, ?> operation) {
        ManagedChannel channel = suite.channel(POD, 50051);
        try {
            Object unused = operation.apply(
                    WhoAmIGrpc.newBlockingStub(channel)
                            .withInterceptors(AdminCredentials.bearer(ComposeSuite.ADMIN_TOKEN))
                            .withDeadlineAfter(5, TimeUnit.SECONDS),
                    DrainRequest.getDefaultInstance());
        } finally {
            channel.shutdownNow();
        }
    }
}
