package dev.grpcops.budget;

import java.time.Duration;
import java.util.function.DoubleSupplier;

/**
 * What the budget layer tells about each call, for metrics: the seam between the rules and a
 * metrics library. Called on the call's own thread, once per event: implementations must be cheap
 * and must not block. Every method does nothing by default.
 */
public interface BudgetListener {

    /** Listens to nothing. */
    BudgetListener NONE = new BudgetListener() {
    };

    /** A served call of {@code method} (full method name) arrived with this budget. */
    default void arrived(String method, Budget budget) {
    }

    /** A downstream call to {@code method} was sent with this deadline. */
    default void handedDownstream(String method, Duration deadline) {
    }

    /** A downstream call to {@code method} was not sent: the budget could not cover it. */
    default void notSent(String method) {
    }

    /**
     * A call that failed with UNAVAILABLE was retried ({@code true}) or not. Called by the default
     * {@link #retryOutcome}: a listener that overrides that one does not get this.
     */
    default void retry(boolean attempted) {
    }

    /**
     * What became of a call to {@code target} (the channel's authority) that failed with
     * UNAVAILABLE: attempted, refused (deadline floor), throttled (tokens or retry budget),
     * pushback (the server said no, or its delay left too little). By default, {@link #retry}.
     */
    default void retryOutcome(String target, RetryOutcome outcome) {
        retry(outcome == RetryOutcome.ATTEMPTED);
    }

    /**
     * The retry governor tracks a new {@code target}; {@code tokens} reads its token bucket (cheap,
     * thread-safe) for a gauge. Called once per target, and there are at most
     * {@link RetryGovernor#MAX_TARGETS} + 1 of them.
     */
    default void retryTarget(String target, DoubleSupplier tokens) {
    }
}
