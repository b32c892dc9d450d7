package dev.grpcops.budget;

import java.time.Duration;
import java.util.Objects;

/**
 * The four numbers every hop shares (design §4), and the rules they make. Pure functions of the
 * time remaining, so that they can be checked without a clock. {@link #builder()} starts from
 * {@link #DEFAULTS}.
 */
public final class BudgetRules {

    /** A caller deadline beyond this is no deadline at all (some clients send "infinity" this way). */
    public static final Duration NO_DEADLINE_BEYOND = Duration.ofSeconds(1_000_000);

    private static final long NO_DEADLINE_BEYOND_NANOS = NO_DEADLINE_BEYOND.toNanos();

    /** The defaults of design §4: reserve 0.2 s, default budget 2 s, min-downstream 0.3 s, retry-min 0.7 s. */
    public static final BudgetRules DEFAULTS = builder().build();

    private final Duration reserve;
    private final Duration defaultBudget;
    private final Duration minDownstream;
    private final Duration retryMin;
    // The same in nanoseconds: every call applies them, and arithmetic on longs allocates nothing.
    private final long reserveNanos;
    private final long minDownstreamNanos;
    private final long retryMinNanos;

    private BudgetRules(Builder builder) {
        this.reserve = requireNotNegative("reserve", builder.reserve);
        this.defaultBudget = requirePositive("default-budget", builder.defaultBudget);
        this.minDownstream = requireNotNegative("min-downstream", builder.minDownstream);
        this.retryMin = requireNotNegative("retry-min", builder.retryMin);
        this.reserveNanos = reserve.toNanos();
        this.minDownstreamNanos = minDownstream.toNanos();
        this.retryMinNanos = retryMin.toNanos();
    }

    /** Starts from {@link #DEFAULTS}. */
    public static Builder builder() {
        return new Builder();
    }

    /** These rules, to change some: {@code rules.toBuilder().reserve(Duration.ofMillis(50)).build()}. */
    public Builder toBuilder() {
        return builder()
                .reserve(reserve)
                .defaultBudget(defaultBudget)
                .minDownstream(minDownstream)
                .retryMin(retryMin);
    }

    /** What a hop keeps for itself: a downstream call gets remaining − reserve. */
    public Duration reserve() {
        return reserve;
    }

    /** The budget assumed for a call that arrives with no deadline. */
    public Duration defaultBudget() {
        return defaultBudget;
    }

    /** Below this downstream budget the call is not sent. */
    public Duration minDownstream() {
        return minDownstream;
    }

    /** A retry needs at least this downstream budget at the moment it would start. */
    public Duration retryMin() {
        return retryMin;
    }

    /** Whether a call arriving with this much time left (null: no deadline) gets the default budget. */
    public boolean usesDefault(Duration callerRemaining) {
        return callerRemaining == null || callerRemaining.compareTo(NO_DEADLINE_BEYOND) > 0;
    }

    /** {@link #usesDefault(Duration)} for a caller that sent a deadline with this much time left, in nanoseconds. */
    public boolean usesDefault(long callerRemainingNanos) {
        return callerRemainingNanos > NO_DEADLINE_BEYOND_NANOS;
    }

    /** The deadline handed to a downstream call: remaining − reserve (negative when overdrawn). */
    public Duration downstream(Duration remaining) {
        return remaining.minus(reserve);
    }

    /** {@link #downstream(Duration)} in nanoseconds. */
    public long downstreamNanos(long remainingNanos) {
        return remainingNanos - reserveNanos;
    }

    /** Whether a downstream call may be sent at all. */
    public boolean allowsCall(Duration remaining) {
        return allowsCall(remaining.toNanos());
    }

    /** {@link #allowsCall(Duration)}, for a remaining time in nanoseconds. */
    public boolean allowsCall(long remainingNanos) {
        return downstreamNanos(remainingNanos) >= minDownstreamNanos;
    }

    /** Whether a call that failed with UNAVAILABLE may be tried once more, now. */
    public boolean allowsRetry(Duration remaining) {
        return allowsRetry(remaining.toNanos());
    }

    /** {@link #allowsRetry(Duration)}, for a remaining time in nanoseconds. */
    public boolean allowsRetry(long remainingNanos) {
        return downstreamNanos(remainingNanos) >= retryMinNanos;
    }

    private static Duration requireNotNegative(String name, Duration value) {
        if (value == null) {
            throw new InvalidBudgetRulesException(name, "must be set");
        }
        if (value.isNegative()) {
            throw new InvalidBudgetRulesException(name, "must not be negative, got " + value);
        }
        return value;
    }

    private static Duration requirePositive(String name, Duration value) {
        requireNotNegative(name, value);
        if (value.isZero()) {
            throw new InvalidBudgetRulesException(name, "must be positive, got " + value);
        }
        return value;
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof BudgetRules other
                && reserve.equals(other.reserve)
                && defaultBudget.equals(other.defaultBudget)
                && minDownstream.equals(other.minDownstream)
                && retryMin.equals(other.retryMin);
    }

    @Override
    public int hashCode() {
        return Objects.hash(reserve, defaultBudget, minDownstream, retryMin);
    }

    @Override
    public String toString() {
        return "BudgetRules[reserve=" + reserve + ", defaultBudget=" + defaultBudget + ", minDownstream="
                + minDownstream + ", retryMin=" + retryMin + "]";
    }

    /** Every rule starts at {@link #DEFAULTS}'. */
    public static final class Builder {

        private Duration reserve = Duration.ofMillis(200);
        private Duration defaultBudget = Duration.ofSeconds(2);
        private Duration minDownstream = Duration.ofMillis(300);
        private Duration retryMin = Duration.ofMillis(700);

        private Builder() {}

        /** What a hop keeps for itself: a downstream call gets remaining − reserve. */
        public Builder reserve(Duration reserve) {
            this.reserve = reserve;
            return this;
        }

        /** The budget assumed for a call that arrives with no deadline. */
        public Builder defaultBudget(Duration defaultBudget) {
            this.defaultBudget = defaultBudget;
            return this;
        }

        /** Below this downstream budget the call is not sent. */
        public Builder minDownstream(Duration minDownstream) {
            this.minDownstream = minDownstream;
            return this;
        }

        /** A retry needs at least this downstream budget at the moment it would start. */
        public Builder retryMin(Duration retryMin) {
            this.retryMin = retryMin;
            return this;
        }

        /** @throws InvalidBudgetRulesException naming the rule that is out of range */
        public BudgetRules build() {
            return new BudgetRules(this);
        }
    }
}
