package dev.grpcops.retry;

import java.util.function.DoubleSupplier;

/**
 * What {@link Retry} and the limiters tell, for metrics. Called on the call's own thread, once per
 * event: implementations must be cheap and must not block. Every method does nothing by default.
 */
public interface RetryListener {

    /** Listens to nothing. */
    RetryListener NONE = new RetryListener() {};

    /** What became of a call to {@code target} (the channel's authority) that failed with {@code UNAVAILABLE}. */
    default void outcome(String target, RetryOutcome outcome) {}

    /**
     * A {@link TokenBucket} tracks a new {@code target}; {@code tokens} reads its bucket (cheap,
     * thread-safe) for a gauge. Called once per target, for at most 65 of them.
     */
    default void tokens(String target, DoubleSupplier tokens) {}

    /**
     * {@link Retry#hedged} learns a new {@code target}'s latency; {@code seconds} reads the delay after
     * which its calls are hedged now ({@code NaN} while too few answers are known to hedge), cheap and
     * thread-safe, for a gauge. Called once per target, for at most 65 of them.
     */
    default void hedgeDelay(String target, DoubleSupplier seconds) {}

    /** A call to {@code target} that may be hedged was made (what the share of hedges is a share of). */
    default void hedgeable(String target) {}

    /** What became of a hedge of a call to {@code target}: sent, then won or lost; or throttled, or refused. */
    default void hedge(String target, HedgeOutcome outcome) {}
}
