package dev.grpcops.systemtest;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** design §6: a maximum connection age makes even a pinned channel behind an L4 balancer move on. */
@Timeout(value = 5, unit = TimeUnit.MINUTES, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
@Order(6) // the lanes' order: junit-platform.properties
class ConnectionAgeIT {

    @Test
    void plainChannelThroughTheBalancerReachesSeveralPodsWithoutFailedCalls() {
        HaProxy.requireInstalled(); // before three JVMs are started for nothing
        try (Replicas replicas = Replicas.whoami(Map.of("MAX_CONNECTION_AGE_MS", "1000"));
                HaProxy clusterIp = HaProxy.inFrontOf(replicas.pods)) {
            // A call every 0.25 s for 8 s on one pick_first channel: elapsed time is what the test is
            // about, long enough for several 1 s connection ages to pass.
            Cli.Result spread = Cli.run("spread", clusterIp.target(), "-n", "32", "--interval", "250ms");

            assertThat(spread.exit()).as("zero failed calls: " + spread.err()).isZero();
            assertThat(spread.pods().values().stream()
                            .mapToInt(Integer::intValue)
                            .sum())
                    .isEqualTo(32);
            assertThat(spread.pods()).as("answered by").hasSizeGreaterThanOrEqualTo(2);
        }
    }
}
