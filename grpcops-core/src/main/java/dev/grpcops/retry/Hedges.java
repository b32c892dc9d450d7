package dev.grpcops.retry;

import dev.grpcops.budget.Budget;
import java.util.function.LongSupplier;

/**
 * What hedging knows per target: the latency its delay follows, whether its hedges have been
 * winning, and the hedges' own share of its calls (Finagle's maxExtraLoad).
 */
final class Hedges {

    final Hedging hedging;
    final Targets<LatencyWindow> latencies;
    final Targets<HedgeWins> wins;
    final RetryBudget budget;

    Hedges(Hedging hedging, LongSupplier nanoClock, RetryListener listener) {
        this.hedging = hedging;
        this.latencies = new Targets<>(
                target -> new LatencyWindow(hedging.percentile(), nanoClock),
                (target, window) -> listener.hedgeDelay(target, () -> {
                    long delay = delayNanos(window);
                    return delay < 0 ? Double.NaN : delay / 1e9;
                }));
        this.wins = new Targets<>(target -> new HedgeWins(nanoClock), (target, wins) -> {});
        this.budget = RetryBudget.builder()
                .percent(hedging.maxExtraPercent())
                .nanoClock(nanoClock)
                .build();
    }

    /** The delay after which a call to {@code target} is hedged, or -1 when it is not to be. */
    long delayNanos(String target, Budget budget) {
        if (budget.arrivedAsRetry()) {
            return -1; // another hop is retrying or hedging this call already: one hop does
        }
        return delayNanos(latencies.get(target));
    }

    /** The hedge delay {@code window} gives now, or -1 before it knows enough. */
    private long delayNanos(LatencyWindow window) {
        long percentile = window.count() < hedging.minSamples() ? -1 : window.percentileNanos();
        if (percentile < 0) {
            return -1; // nothing learned yet: no guess
        }
        return Math.max(
                hedging.minDelay().toNanos(), Math.min(hedging.maxDelay().toNanos(), percentile));
    }
}
