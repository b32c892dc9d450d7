package dev.grpcops.budget;

import java.time.Duration;
import java.util.Objects;

/**
 * The numbers of the retry governor (SPEC §11), per downstream target: a gRFC A6 token bucket and
 * a ratio retry budget. A retry needs both, on top of the deadline floor of {@link BudgetRules}.
 *
 * @param maxTokens A6 {@code maxTokens}: the bucket starts full with this many tokens; an
 *     {@code UNAVAILABLE} (or pushed-back) attempt costs 1, and retries stop while tokens ≤ half
 * @param tokenRatio A6 {@code tokenRatio}: what a successful attempt puts back (at most 3 decimals)
 * @param budgetPercent retries may be at most this percentage of the calls of the last window
 * @param budgetWindow the window the retry budget counts over (ten slots of a tenth each)
 * @param minRetriesPerSecond the floor of the retry budget: this many retries per second of the
 *     window are allowed on top of the percentage, so that a quiet service can still retry a blip
 */
public record RetryThrottling(int maxTokens, double tokenRatio, double budgetPercent, Duration budgetWindow,
        double minRetriesPerSecond) {

    /** SPEC §11: A6's example bucket (10, 0.1), 10 % of the calls of the last 10 s, plus 1 retry per second. */
    public static final RetryThrottling DEFAULTS = new RetryThrottling(10, 0.1, 10, Duration.ofSeconds(10), 1);

    private static final String PREFIX = "grpcops.budget.retry.";

    public RetryThrottling {
        if (maxTokens < 1 || maxTokens > 1000) {
            throw new IllegalArgumentException(PREFIX + "max-tokens must be 1-1000, got " + maxTokens);
        }
        if (!(tokenRatio > 0) || tokenRatio > maxTokens) {
            throw new IllegalArgumentException(PREFIX + "token-ratio must be > 0 and ≤ max-tokens, got " + tokenRatio);
        }
        if (!(budgetPercent >= 0) || budgetPercent > 100) {
            throw new IllegalArgumentException(PREFIX + "budget-percent must be 0-100, got " + budgetPercent);
        }
        Objects.requireNonNull(budgetWindow, () -> PREFIX + "budget-window must be set");
        if (budgetWindow.compareTo(Duration.ofSeconds(1)) < 0 || budgetWindow.compareTo(Duration.ofHours(1)) > 0) {
            throw new IllegalArgumentException(PREFIX + "budget-window must be 1s-1h, got " + budgetWindow);
        }
        if (!(minRetriesPerSecond >= 0) || minRetriesPerSecond > 1000) {
            throw new IllegalArgumentException(PREFIX + "min-retries-per-second must be 0-1000, got " + minRetriesPerSecond);
        }
    }

    /** What the retry budget allows in a window with this many calls and no retries yet. */
    public double retriesAllowed(long callsInWindow) {
        return budgetPercent / 100 * callsInWindow + minRetriesPerSecond * budgetWindow.toNanos() / 1e9;
    }
}
