package dev.grpcops.budget;

import java.time.Duration;

/**
 * What the budget layer tells about each call, for metrics: the seam between the rules and a
 * metrics library. Called on the call's own thread, once per event: implementations must be cheap
 * and must not block. Every method does nothing by default.
 */
public interface BudgetListener {

    /** Listens to nothing. */
    BudgetListener NONE = new BudgetListener() {};

    /** A served call of {@code method} (full method name) arrived with this budget. */
    default void arrived(String method, Budget budget) {}

    /** A downstream call to {@code method} was sent with this deadline. */
    default void handedDownstream(String method, Duration deadline) {}

    /**
     * A downstream call to {@code method} was sent with a deadline this many nanoseconds away: what
     * the budget layer calls, once per downstream call. By default it hands a {@link Duration} to
     * {@link #handedDownstream(String, Duration)}; a listener that records numbers overrides this
     * one and saves the object.
     */
    default void handedDownstreamNanos(String method, long deadlineNanos) {
        handedDownstream(method, Duration.ofNanos(deadlineNanos));
    }

    /** A downstream call to {@code method} was not sent: the budget could not cover it. */
    default void notSent(String method) {}

    /** A served call of {@code method} was answered; {@code line} is where its budget went at this hop. */
    default void answered(String method, LedgerLine line) {}
}
