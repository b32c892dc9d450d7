package dev.grpcops.systemtest;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.grpcops.cli.Targets;
import dev.grpcops.proto.whoami.v1.WhoAmIGrpc;
import dev.grpcops.proto.whoami.v1.WhoRequest;
import io.grpc.ManagedChannel;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * design §10: a rolling restart of the WhoAmI replicas under a client's spread load (health-checked
 * round robin over the three pods) fails no call. The Stock restarts are {@link RestartIT}'s.
 */
@Timeout(value = 5, unit = TimeUnit.MINUTES, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
@Order(9) // the lanes' order: junit-platform.properties
class WhoAmIRestartIT {

    @Test
    void rollingRestartOfWhoAmIUnderSpreadLoadFailsNoCall() throws Exception {
        try (Replicas pods =
                Replicas.whoami(Map.of(), "--grpcops.shutdown.drain-delay=" + RestartIT.DRAIN.toMillis() + "ms")) {
            ManagedChannel channel = Targets.channel(pods.addressList(), Targets.ChannelConfig.hc);
            try {
                WhoAmIGrpc.WhoAmIBlockingStub whoami = WhoAmIGrpc.newBlockingStub(channel);
                // 5 ms between a thread's calls: a steady stream, not a saturating one, as a client's traffic.
                try (SteadyLoad load = new SteadyLoad(
                        4,
                        Duration.ofMillis(5),
                        () -> whoami.withDeadlineAfter(3, TimeUnit.SECONDS).who(WhoRequest.getDefaultInstance()))) {
                    for (ServiceProcess pod : pods.pods) {
                        RestartIT.restart(pod);
                        awaitWhoAmITraffic(whoami, pod.name.substring(pod.name.length() - 2));
                    }
                    load.close();

                    RestartIT.record("rolling restart of 3 WhoAmI replicas: " + load.succeeded() + " calls, "
                            + load.failedCount() + " failed");
                    assertThat(load.failures()).as("failed calls").isEmpty();
                    assertThat(load.succeeded()).isPositive();
                }
            } finally {
                channel.shutdownNow();
            }
        }
    }

    private static void awaitWhoAmITraffic(WhoAmIGrpc.WhoAmIBlockingStub whoami, String pod) {
        await().atMost(Duration.ofSeconds(30))
                .until(() -> pod.equals(whoami.withDeadlineAfter(3, TimeUnit.SECONDS)
                        .who(WhoRequest.getDefaultInstance())
                        .getPod()));
    }
}
