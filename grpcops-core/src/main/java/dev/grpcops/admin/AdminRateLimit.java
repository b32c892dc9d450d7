package dev.grpcops.admin;

import java.time.Duration;

/**
 * How refused admin calls are limited and logged, per caller address (IP, whatever the port).
 *
 * <p>A refused call is one the admin authorization ends: no or malformed credentials, a wrong
 * token, or admin operations disabled. Once {@code maxFailures} such calls from one address fall
 * within {@code window} (counted from the first of them), every admin call from that address ends
 * with {@code RESOURCE_EXHAUSTED} until the window has passed, its token not even looked at: an
 * address that guessed too often learns nothing more by guessing. Once {@code maxRefusedOverall}
 * such calls from all addresses but the loopback fall within a window, the same holds for every
 * address but the loopback: guesses spread over many addresses are bounded too, while an operator
 * inside the pod ({@code kubectl port-forward}, {@code kubectl exec}) is never locked out by others.
 * A call with the right token from an address not locked out forgives that address's count.
 * Refused calls are logged at most once per {@code logInterval} per address, with their count.
 *
 * <p>Admin calls let through are never queued nor shed by admission, but at most {@code
 * maxConcurrent} run at once; beyond that one ends {@code RESOURCE_EXHAUSTED} at once, so that a
 * flood of admin calls, even authorized ones, cannot take the server's threads.
 *
 * <p>At most {@code maxPeers} addresses are tracked (a few hundred bytes each, about 3 MB at 10 000); beyond that the one
 * least recently seen is forgotten. No thread is used: the bookkeeping happens on the calls.
 */
public final class AdminRateLimit {

    /**
     * 5 refused calls per 10 s per address and 100 from all of them, 10 000 addresses, one log line
     * per address per 10 s, 4 admin calls at once.
     */
    public static final AdminRateLimit DEFAULTS = builder().build();

    private final int maxFailures;
    private final Duration window;
    private final int maxPeers;
    private final Duration logInterval;
    private final int maxRefusedOverall;
    private final int maxConcurrent;

    private AdminRateLimit(Builder builder) {
        if (builder.maxFailures < 1) {
            throw new IllegalArgumentException("maxFailures must be at least 1, got " + builder.maxFailures);
        }
        requirePositive("window", builder.window);
        if (builder.maxPeers < 1) {
            throw new IllegalArgumentException("maxPeers must be at least 1, got " + builder.maxPeers);
        }
        requirePositive("logInterval", builder.logInterval);
        if (builder.maxRefusedOverall < builder.maxFailures) {
            throw new IllegalArgumentException("maxRefusedOverall must be at least maxFailures (" + builder.maxFailures
                    + "), got " + builder.maxRefusedOverall);
        }
        if (builder.maxConcurrent < 1) {
            throw new IllegalArgumentException("maxConcurrent must be at least 1, got " + builder.maxConcurrent);
        }
        this.maxFailures = builder.maxFailures;
        this.window = builder.window;
        this.maxPeers = builder.maxPeers;
        this.logInterval = builder.logInterval;
        this.maxRefusedOverall = builder.maxRefusedOverall;
        this.maxConcurrent = builder.maxConcurrent;
    }

    /** Refused calls within the window after which an address is refused unchecked. */
    public int maxFailures() {
        return maxFailures;
    }

    /** How long refused calls count, and how long an address stays refused. */
    public Duration window() {
        return window;
    }

    /** How many addresses are tracked at most. */
    public int maxPeers() {
        return maxPeers;
    }

    /** At most one WARN line per address per this interval. */
    public Duration logInterval() {
        return logInterval;
    }

    /** Refused calls within the window, from all addresses but the loopback, after which those addresses are refused unchecked. */
    public int maxRefusedOverall() {
        return maxRefusedOverall;
    }

    /** Admin calls let through that may run at once. */
    public int maxConcurrent() {
        return maxConcurrent;
    }

    /** A builder starting from these values. */
    public Builder toBuilder() {
        return builder()
                .maxFailures(maxFailures)
                .window(window)
                .maxPeers(maxPeers)
                .logInterval(logInterval)
                .maxRefusedOverall(maxRefusedOverall)
                .maxConcurrent(maxConcurrent);
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof AdminRateLimit other
                && maxFailures == other.maxFailures
                && window.equals(other.window)
                && maxPeers == other.maxPeers
                && logInterval.equals(other.logInterval)
                && maxRefusedOverall == other.maxRefusedOverall
                && maxConcurrent == other.maxConcurrent;
    }

    @Override
    public int hashCode() {
        return java.util.Objects.hash(maxFailures, window, maxPeers, logInterval, maxRefusedOverall, maxConcurrent);
    }

    @Override
    public String toString() {
        return "AdminRateLimit[maxFailures=" + maxFailures + ", window=" + window + ", maxPeers=" + maxPeers
                + ", logInterval=" + logInterval + ", maxRefusedOverall=" + maxRefusedOverall + ", maxConcurrent="
                + maxConcurrent + "]";
    }

    private static void requirePositive(String name, Duration value) {
        if (value == null || value.isNegative() || value.isZero()) {
            throw new IllegalArgumentException(name + " must be positive, got " + value);
        }
    }

    /** Starts from {@link #DEFAULTS}. */
    public static Builder builder() {
        return new Builder();
    }

    /** Every value starts at {@link #DEFAULTS}'. */
    public static final class Builder {

        private int maxFailures = 5;
        private Duration window = Duration.ofSeconds(10);
        private int maxPeers = 10_000;
        private Duration logInterval = Duration.ofSeconds(10);
        private int maxRefusedOverall = 100;
        private int maxConcurrent = 4;

        private Builder() {}

        /** Refused calls within the window after which an address is refused unchecked. */
        public Builder maxFailures(int maxFailures) {
            this.maxFailures = maxFailures;
            return this;
        }

        /** How long refused calls count, and how long an address stays refused. */
        public Builder window(Duration window) {
            this.window = window;
            return this;
        }

        /** How many addresses are tracked at most. */
        public Builder maxPeers(int maxPeers) {
            this.maxPeers = maxPeers;
            return this;
        }

        /** At most one WARN line per address per this interval. */
        public Builder logInterval(Duration logInterval) {
            this.logInterval = logInterval;
            return this;
        }

        /** Refused calls within the window, from all addresses but the loopback, after which those addresses are refused unchecked. */
        public Builder maxRefusedOverall(int maxRefusedOverall) {
            this.maxRefusedOverall = maxRefusedOverall;
            return this;
        }

        /** Admin calls let through that may run at once. */
        public Builder maxConcurrent(int maxConcurrent) {
            this.maxConcurrent = maxConcurrent;
            return this;
        }

        /** @throws IllegalArgumentException naming the value out of range */
        public AdminRateLimit build() {
            return new AdminRateLimit(this);
        }
    }
}
