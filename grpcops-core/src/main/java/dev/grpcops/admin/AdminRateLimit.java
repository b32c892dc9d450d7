package dev.grpcops.admin;

import java.time.Duration;

/**
 * How refused admin calls are limited and logged, per caller address (IP, whatever the port).
 *
 * <p>A refused call is one the admin authorization ends: no or malformed credentials, a wrong
 * token, or admin operations disabled. Once {@code maxFailures} such calls from one address fall
 * within {@code window} (counted from the first of them), every further refused call from that
 * address ends with {@code RESOURCE_EXHAUSTED}, without saying what was wrong, until the window has
 * passed. A call with the right token always passes, and forgives the address's count: admins
 * behind a proxy are never locked out by someone else's wrong tokens. Refused calls are logged
 * at most once per {@code logInterval} per address, with their count.
 *
 * <p>At most {@code maxPeers} addresses are tracked (a few hundred bytes each, about 3 MB at 10 000); beyond that the one
 * least recently seen is forgotten. No thread is used: the bookkeeping happens on the calls.
 */
public final class AdminRateLimit {

    /** Refused calls per window per address by default. */
    public static final int DEFAULT_MAX_FAILURES = 5;
    /** The window by default. */
    public static final Duration DEFAULT_WINDOW = Duration.ofSeconds(10);
    /** Addresses tracked by default. */
    public static final int DEFAULT_MAX_PEERS = 10_000;
    /** One log line per address per this, by default. */
    public static final Duration DEFAULT_LOG_INTERVAL = Duration.ofSeconds(10);

    /** 5 refused calls per 10 s per address, 10 000 addresses, one log line per address per 10 s. */
    public static final AdminRateLimit DEFAULTS = builder().build();

    private final int maxFailures;
    private final Duration window;
    private final int maxPeers;
    private final Duration logInterval;

    private AdminRateLimit(int maxFailures, Duration window, int maxPeers, Duration logInterval) {
        if (maxFailures < 1) {
            throw new IllegalArgumentException("maxFailures must be at least 1, got " + maxFailures);
        }
        requirePositive("window", window);
        if (maxPeers < 1) {
            throw new IllegalArgumentException("maxPeers must be at least 1, got " + maxPeers);
        }
        requirePositive("logInterval", logInterval);
        this.maxFailures = maxFailures;
        this.window = window;
        this.maxPeers = maxPeers;
        this.logInterval = logInterval;
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

    @Override
    public boolean equals(Object o) {
        return o instanceof AdminRateLimit other
                && maxFailures == other.maxFailures
                && window.equals(other.window)
                && maxPeers == other.maxPeers
                && logInterval.equals(other.logInterval);
    }

    @Override
    public int hashCode() {
        return java.util.Objects.hash(maxFailures, window, maxPeers, logInterval);
    }

    @Override
    public String toString() {
        return "AdminRateLimit[maxFailures=" + maxFailures + ", window=" + window + ", maxPeers=" + maxPeers
                + ", logInterval=" + logInterval + "]";
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

    /** Every value starts at its default ({@code DEFAULT_*}). */
    public static final class Builder {

        private int maxFailures = DEFAULT_MAX_FAILURES;
        private Duration window = DEFAULT_WINDOW;
        private int maxPeers = DEFAULT_MAX_PEERS;
        private Duration logInterval = DEFAULT_LOG_INTERVAL;

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

        /** @throws IllegalArgumentException naming the value out of range */
        public AdminRateLimit build() {
            return new AdminRateLimit(maxFailures, window, maxPeers, logInterval);
        }
    }
}
