package dev.grpcops.retry;

import java.util.List;

/**
 * Decides, per downstream target, whether one more attempt of a call (a retry or a hedge) may be
 * sent, so that a failing or slow backend is not hit twice as hard. {@link Retry} tells it about
 * every attempt and asks it before each extra one; the deadline budget and server pushback are
 * checked besides, by {@link Retry} itself.
 *
 * <p>A target is the channel's authority (what gRFC A6 throttles per channel). Implementations are
 * thread-safe, never block, and keep a bounded number of targets.
 *
 * <pre>{@code
 * RetryLimiter limiter = RetryLimiter.allOf(TokenBucket.builder().build(), RetryBudget.builder().build());
 * }</pre>
 */
public interface RetryLimiter {

    /** A first attempt went to {@code target}: what a ratio budget is a share of. */
    default void onCall(String target) {}

    /** An attempt to {@code target} succeeded. */
    default void onSuccess(String target) {}

    /** An attempt to {@code target} failed with {@code UNAVAILABLE}, or its answer carried pushback (A6's failure). */
    default void onFailure(String target) {}

    /**
     * Whether one more attempt may go to {@code target} now. When it may, the attempt counts as
     * sent; {@link #release} gives it back if it is not sent after all.
     */
    boolean tryAcquire(String target);

    /** Gives back an attempt {@link #tryAcquire} allowed and that was not sent. */
    default void release(String target) {}

    /** Allows every attempt: only the deadline budget and pushback then decide. */
    static RetryLimiter unlimited() {
        return target -> true;
    }

    /**
     * Allows an attempt only when every one of {@code limiters} does; each hears of every call and
     * result. A limiter that refuses gives back what the ones before it took.
     */
    static RetryLimiter allOf(RetryLimiter... limiters) {
        return new AllOf(List.of(limiters));
    }

    /** design §11's defaults: a gRFC A6 token bucket (10, 0.1) and a retry budget of 10 % plus 1 per second over 10 s. */
    static RetryLimiter defaults(RetryListener listener) {
        return allOf(
                TokenBucket.builder().listener(listener).build(),
                RetryBudget.builder().build());
    }
}
