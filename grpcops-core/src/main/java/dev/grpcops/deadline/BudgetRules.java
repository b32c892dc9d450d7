package dev.grpcops.deadline;

import java.time.Duration;
import java.util.Objects;

/**
 * The four numbers every hop shares (design §4), and the rules they make. Pure functions of the
 * time remaining, so that they can be checked without a clock.
 *
 * @param reserve what a hop keeps for itself: a downstream call gets remaining − reserve
 * @param defaultBudget the budget assumed for a call that arrives with no deadline
 * @param minDownstream below this downstream budget the call is not sent
 * @param retryMin a retry needs at least this downstream budget at the moment it would start
 */
public record BudgetRules(Duration reserve, Duration defaultBudget, Duration minDownstream, Duration retryMin) {

    /** A caller deadline beyond this is no deadline at all (some clients send "infinity" this way). */
    public static final Duration NO_DEADLINE_BEYOND = Duration.ofSeconds(1_000_000);

    /** The defaults of design §4: 0.2 s, 2 s, 0.3 s, 0.7 s. */
    public static final BudgetRules DEFAULTS = new BudgetRules(
            Duration.ofMillis(200), Duration.ofSeconds(2), Duration.ofMillis(300), Duration.ofMillis(700));

    public BudgetRules {
        requireNotNegative("reserve", reserve);
        requirePositive("default-budget", defaultBudget);
        requireNotNegative("min-downstream", minDownstream);
        requireNotNegative("retry-min", retryMin);
    }

    /** Whether a call arriving with this much time left (null: no deadline) gets the default budget. */
    public boolean usesDefault(Duration callerRemaining) {
        return callerRemaining == null || callerRemaining.compareTo(NO_DEADLINE_BEYOND) > 0;
    }

    /** The deadline handed to a downstream call: remaining − reserve (negative when overdrawn). */
    public Duration downstream(Duration remaining) {
        return remaining.minus(reserve);
    }

    /** Whether a downstream call may be sent at all. */
    public boolean allowsCall(Duration remaining) {
        return downstream(remaining).compareTo(minDownstream) >= 0;
    }

    /** Whether a call that failed with UNAVAILABLE may be tried once more, now. */
    public boolean allowsRetry(Duration remaining) {
        return downstream(remaining).compareTo(retryMin) >= 0;
    }

    private static void requireNotNegative(String name, Duration value) {
        Objects.requireNonNull(value, () -> "grpcops.budget." + name + " must be set");
        if (value.isNegative()) {
            throw new IllegalArgumentException("grpcops.budget." + name + " must not be negative, got " + value);
        }
    }

    private static void requirePositive(String name, Duration value) {
        requireNotNegative(name, value);
        if (value.isZero()) {
            throw new IllegalArgumentException("grpcops.budget." + name + " must be positive, got " + value);
        }
    }
}
