package dev.grpcops.retry;

import java.time.Duration;
import java.util.Objects;

/**
 * When {@link Retry#hedged} sends a second attempt of an idempotent call: once the first has had
 * no answer for the hedge delay, a high {@code percentile} of the target's recent latency (learned
 * from its last answers, at least {@code minSamples} of them: no hedge before), bounded by
 * {@code minDelay} and {@code maxDelay}. Hedges are at most {@code maxExtraPercent} % of a target's
 * calls (Finagle's {@code maxExtraLoad}), and each is also paid from the {@link RetryLimiter}, as a retry is.
 * While fewer than one in ten of a target's recent hedges win (the whole target is slow, not one
 * replica), one hedge a second goes to it, and every answer is learned so that the delay follows them.
 * @see #builder()
 */
public final class Hedging {

    /**
     * Hedge after the 99.5th percentile of the last 30 s of answers (a few calls in a thousand in steady
     * state, so that nearly all of the cap is left for when a replica turns bad); 2 ms to 1 s; 200
     * answers first; at most 10 % more calls: a replica that turns slow keeps a few % of the calls
     * (more in its first second) until outlier detection ejects it, since the hedges that win cancel
     * its calls and the balancer sees them last only the hedge delay, and each of them needs a hedge.
     */
    public static final Hedging DEFAULTS = new Hedging(99.5, Duration.ofMillis(2), Duration.ofSeconds(1), 200, 10);

    private final double percentile;
    private final Duration minDelay;
    private final Duration maxDelay;
    private final int minSamples;
    private final double maxExtraPercent;

    private Hedging(double percentile, Duration minDelay, Duration maxDelay, int minSamples, double maxExtraPercent) {
        if (!(percentile >= 50 && percentile <= 99.9)) {
            throw new IllegalArgumentException("percentile must be 50-99.9, got " + percentile);
        }
        Objects.requireNonNull(minDelay, "min-delay must be set");
        Objects.requireNonNull(maxDelay, "max-delay must be set");
        if (minDelay.isNegative()
                || maxDelay.compareTo(minDelay) < 0
                || maxDelay.compareTo(Duration.ofMinutes(1)) > 0) {
            throw new IllegalArgumentException(
                    "max-delay must be at least min-delay (" + minDelay + ") and at most 1m, got " + maxDelay);
        }
        if (minSamples < 1 || minSamples > LatencyWindow.MAX_MIN_SAMPLES) {
            throw new IllegalArgumentException(
                    "min-samples must be 1-" + LatencyWindow.MAX_MIN_SAMPLES + ", got " + minSamples);
        }
        if (!(maxExtraPercent >= 0 && maxExtraPercent <= 100)) {
            throw new IllegalArgumentException("max-extra-percent must be 0-100, got " + maxExtraPercent);
        }
        this.percentile = percentile;
        this.minDelay = minDelay;
        this.maxDelay = maxDelay;
        this.minSamples = minSamples;
        this.maxExtraPercent = maxExtraPercent;
    }

    /** The latency percentile the delay follows (50-99.9). */
    public double percentile() {
        return percentile;
    }

    /** The shortest hedge delay. */
    public Duration minDelay() {
        return minDelay;
    }

    /** The longest hedge delay. */
    public Duration maxDelay() {
        return maxDelay;
    }

    /** Answers of a target needed before its calls are hedged. */
    public int minSamples() {
        return minSamples;
    }

    /** Hedges per target at most this % of its calls of the last 10 s (plus 1 per second). */
    public double maxExtraPercent() {
        return maxExtraPercent;
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof Hedging other
                && percentile == other.percentile
                && minDelay.equals(other.minDelay)
                && maxDelay.equals(other.maxDelay)
                && minSamples == other.minSamples
                && maxExtraPercent == other.maxExtraPercent;
    }

    @Override
    public int hashCode() {
        return java.util.Objects.hash(percentile, minDelay, maxDelay, minSamples, maxExtraPercent);
    }

    @Override
    public String toString() {
        return "Hedging[percentile=" + percentile + ", minDelay=" + minDelay + ", maxDelay=" + maxDelay
                + ", minSamples=" + minSamples + ", maxExtraPercent=" + maxExtraPercent + "]";
    }

    /** Starts from {@link #DEFAULTS}: {@code Hedging.builder().percentile(99).maxDelay(Duration.ofMillis(300)).build()}. */
    public static Builder builder() {
        return new Builder();
    }

    /** These settings, to change some: {@code hedging.toBuilder().percentile(99).build()}. */
    public Builder toBuilder() {
        return builder()
                .percentile(percentile)
                .delay(minDelay, maxDelay)
                .minSamples(minSamples)
                .maxExtraPercent(maxExtraPercent);
    }

    /** Every value starts at {@link #DEFAULTS}'; {@link #build()} checks them together. */
    public static final class Builder {

        private double percentile = DEFAULTS.percentile;
        private Duration minDelay = DEFAULTS.minDelay;
        private Duration maxDelay = DEFAULTS.maxDelay;
        private int minSamples = DEFAULTS.minSamples;
        private double maxExtraPercent = DEFAULTS.maxExtraPercent;

        private Builder() {}

        /** The latency percentile the delay follows (50-99.9). */
        public Builder percentile(double percentile) {
            this.percentile = percentile;
            return this;
        }

        /** The shortest and the longest hedge delay. */
        public Builder delay(Duration min, Duration max) {
            this.minDelay = min;
            this.maxDelay = max;
            return this;
        }

        /** Answers of a target needed before its calls are hedged. */
        public Builder minSamples(int minSamples) {
            this.minSamples = minSamples;
            return this;
        }

        /** Hedges per target at most this % of its calls of the last 10 s (plus 1 per second). */
        public Builder maxExtraPercent(double maxExtraPercent) {
            this.maxExtraPercent = maxExtraPercent;
            return this;
        }

        /** @throws IllegalArgumentException naming the value out of range */
        public Hedging build() {
            return new Hedging(percentile, minDelay, maxDelay, minSamples, maxExtraPercent);
        }
    }
}
