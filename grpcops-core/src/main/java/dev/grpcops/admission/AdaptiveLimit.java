package dev.grpcops.admission;

import dev.grpcops.Experimental;
import java.time.Duration;
import java.util.Objects;

/**
 * Seats that follow measured latency (design §19), opt-in through
 * {@link AdmissionConfig.Builder#adaptiveLimit}: after a first probe (below), the server's limit
 * starts at {@link AdmissionConfig#limit()} and, once a {@link #window()}, moves by the gradient
 * between a baseline latency and the window's mean service time (after Netflix concurrency-limits'
 * Gradient2 and Envoy's adaptive concurrency filter), within {@link #minLimit()} and
 * {@link #maxLimit()}. Each level keeps its share of whatever the limit is
 * ({@code grpc_admission_limit_seats}).
 *
 * <ul>
 *   <li>Only calls that were served and answered OK are samples: a rejected, cancelled or failed
 *       call ends fast without saying the server is fast.
 *   <li>Fault injection's held time is not part of a sample: an injected delay does not move with
 *       concurrency, and measured it would drive the limit to its minimum (Envoy's fault filter
 *       must come before its adaptive concurrency filter for the same reason).
 *   <li>The baseline, what a call takes without queueing, is measured by a probe: the next 10
 *       calls run with the minimum of calls working. There is one at the start, one every 30 windows, one once
 *       the limit has halved since the last, and one after 5 windows at the minimum: a lasting
 *       change of the service's own latency becomes the new baseline, and never pins the limit at
 *       its minimum.
 *   <li>The limit grows only while the server uses at least half of it.
 *   <li>The limit is of calls working: a sample leaves out a call's waits on others (its downstream
 *       calls, an injected delay), and the seats are the limit times the time calls hold a seat
 *       over their own time, so that calls waiting on a slower dependency keep seats beside the
 *       calls working; the dependency's own limit is the one that falls.
 * </ul>
 */
@Experimental("The adaptive seats' gradient and its settings are still tuned against measured overloads")
public final class AdaptiveLimit {

    /** 8 to 512 seats, changed at most once a second, falling once a window's latency is 1.5 × the baseline. */
    public static final AdaptiveLimit DEFAULTS = builder().build();

    private final int minLimit;
    private final int maxLimit;
    private final Duration window;
    private final double tolerance;

    private AdaptiveLimit(Builder builder) {
        this.minLimit = builder.minLimit;
        this.maxLimit = builder.maxLimit;
        this.window = builder.window;
        this.tolerance = builder.tolerance;
        if (minLimit < 1) {
            throw new InvalidAdmissionConfigException("adaptive.min-limit", "must be at least 1 seat, got " + minLimit);
        }
        if (maxLimit < minLimit) {
            throw new InvalidAdmissionConfigException(
                    "adaptive.max-limit", "must not be below adaptive.min-limit (" + minLimit + "), got " + maxLimit);
        }
        if (window == null || window.isNegative() || window.isZero()) {
            throw new InvalidAdmissionConfigException("adaptive.window", "must be positive, got " + window);
        }
        if (!(tolerance >= 1.0) || Double.isInfinite(tolerance)) {
            throw new InvalidAdmissionConfigException("adaptive.tolerance", "must be at least 1.0, got " + tolerance);
        }
    }

    /** Starts from {@link #DEFAULTS}. */
    public static Builder builder() {
        return new Builder();
    }

    /** These settings, to change some: {@code limit.toBuilder().maxLimit(256).build()}. */
    public Builder toBuilder() {
        return builder().minLimit(minLimit).maxLimit(maxLimit).window(window).tolerance(tolerance);
    }

    /** The fewest seats the limit falls to. */
    public int minLimit() {
        return minLimit;
    }

    /** The most seats the limit grows to. */
    public int maxLimit() {
        return maxLimit;
    }

    /** How often the limit may change; a window with fewer than 10 samples changes nothing. */
    public Duration window() {
        return window;
    }

    /** How far above the baseline a window's latency may be before the limit falls (1.5: 50 %). */
    public double tolerance() {
        return tolerance;
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof AdaptiveLimit other
                && minLimit == other.minLimit
                && maxLimit == other.maxLimit
                && window.equals(other.window)
                && tolerance == other.tolerance;
    }

    @Override
    public int hashCode() {
        return Objects.hash(minLimit, maxLimit, window, tolerance);
    }

    @Override
    public String toString() {
        return "AdaptiveLimit[minLimit=" + minLimit + ", maxLimit=" + maxLimit + ", window=" + window + ", tolerance="
                + tolerance + "]";
    }

    /** Every value starts at {@link #DEFAULTS}'. */
    public static final class Builder {

        private int minLimit = 8;
        private int maxLimit = 512;
        private Duration window = Duration.ofSeconds(1);
        private double tolerance = 1.5;

        private Builder() {}

        /** The fewest seats the limit falls to; at least one per priority level; 8 by default. */
        public Builder minLimit(int minLimit) {
            this.minLimit = minLimit;
            return this;
        }

        /** The most seats the limit grows to; 512 by default. */
        public Builder maxLimit(int maxLimit) {
            this.maxLimit = maxLimit;
            return this;
        }

        /** How often the limit may change; 1 s by default. */
        public Builder window(Duration window) {
            this.window = window;
            return this;
        }

        /** How far above the baseline a window's latency may be before the limit falls; 1.5 by default. */
        public Builder tolerance(double tolerance) {
            this.tolerance = tolerance;
            return this;
        }

        /** @throws InvalidAdmissionConfigException naming the field that is out of range */
        public AdaptiveLimit build() {
            return new AdaptiveLimit(this);
        }
    }
}
