package dev.grpcops.spring.server;

import static org.assertj.core.api.Assertions.assertThat;

import dev.grpcops.client.CancellationBudget;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * {@code grpcops.server.*} has no counterpart in the core (it configures the Netty server), but its
 * rapid-reset guard and the core's default cancellation budget are two ends of one rule: a client on
 * the library's defaults never sends, in any window, the cancellations a server on the starter's
 * defaults closes a connection for.
 */
@Timeout(30)
class ServerLimitsPropertiesDefaultsTests {

    @Test
    void theDefaultCancellationBudgetStaysUnderTheDefaultRapidResetGuard() {
        ServerLimitsProperties limits = new ServerLimitsProperties();
        CancellationBudget budget = CancellationBudget.builder().build();
        double windowSeconds = limits.getRstFramesWindow().toMillis() / 1000.0;

        // At most the burst plus a window's refill leave in any window.
        assertThat(budget.burst() + budget.perSecond() * windowSeconds).isLessThan(limits.getMaxRstFrames());
    }

    @Test
    void theGuardLetsAClientCancelEveryCallItMayHaveOpenTwice() {
        ServerLimitsProperties limits = new ServerLimitsProperties();

        assertThat(limits.getMaxRstFrames()).isGreaterThanOrEqualTo(2 * limits.getMaxConcurrentCallsPerConnection());
    }
}
