package dev.grpcops.systemtest;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.Map;
import org.junit.jupiter.api.Test;

/** SPEC §6: a maximum connection age makes even a pinned channel behind an L4 balancer move on. */
class ConnectionAgeTests {

    @Test
    void plainChannelThroughTheBalancerReachesSeveralPodsWithoutFailedCalls() {
        try (Replicas replicas = Replicas.whoami(Map.of("MAX_CONNECTION_AGE_MS", "1000"));
                HaProxy clusterIp = HaProxy.inFrontOf(replicas.pods)) {
            // A call every 0.25 s for 8 s on one pick_first channel.
            Cli.Result spread = Cli.run("spread", clusterIp.target(), "-n", "32", "--interval", "250ms");

            assertThat(spread.exit()).as("zero failed calls: " + spread.err()).isZero();
            assertThat(spread.pods().values().stream().mapToInt(Integer::intValue).sum()).isEqualTo(32);
            assertThat(spread.pods()).as("answered by").hasSizeGreaterThanOrEqualTo(2);
        }
    }
}
