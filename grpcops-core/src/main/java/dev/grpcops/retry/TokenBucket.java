package dev.grpcops.retry;

import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * gRFC A6 retry throttling, per downstream target: the bucket starts full with
 * {@code maxTokens}; an attempt that fails with {@code UNAVAILABLE} (or whose answer carries
 * pushback) costs one token, a successful one puts {@code tokenRatio} back, and no extra attempt is
 * allowed while the tokens are at or below half. Looking costs nothing from the bucket: it only
 * refuses. One {@link AtomicInteger} of milli-tokens per target, updated by compare-and-set.
 *
 * <pre>{@code
 * TokenBucket bucket = TokenBucket.builder().maxTokens(10).tokenRatio(0.1).listener(metrics).build();
 * }</pre>
 */
public final class TokenBucket implements RetryLimiter {

    private final int maxTokens;
    private final double tokenRatio;
    private final RetryListener listener;
    private final int maxMilli;
    private final int ratioMilli;
    private final Targets<AtomicInteger> targets;

    private TokenBucket(Builder builder) {
        this.maxTokens = builder.maxTokens;
        this.tokenRatio = builder.tokenRatio;
        this.listener = builder.listener;
        this.maxMilli = builder.maxTokens * 1000;
        this.ratioMilli = (int) Math.round(builder.tokenRatio * 1000);
        this.targets = new Targets<>(
                target -> new AtomicInteger(maxMilli),
                (target, milli) -> listener.tokens(target, () -> milli.get() / 1000.0));
    }

    public static Builder builder() {
        return new Builder();
    }

    /** A builder for another bucket like this one: the same settings, full buckets. */
    public Builder toBuilder() {
        return builder().maxTokens(maxTokens).tokenRatio(tokenRatio).listener(listener);
    }

    /** The bucket's size and starting content (A6 {@code maxTokens}). */
    public int maxTokens() {
        return maxTokens;
    }

    /** What a successful attempt puts back (A6 {@code tokenRatio}). */
    public double tokenRatio() {
        return tokenRatio;
    }

    @Override
    public void onSuccess(String target) {
        targets.get(target).accumulateAndGet(ratioMilli, (tokens, gain) -> Math.min(maxMilli, tokens + gain));
    }

    @Override
    public void onFailure(String target) {
        targets.get(target).accumulateAndGet(1000, (tokens, cost) -> Math.max(0, tokens - cost));
    }

    /** A6: extra attempts stop while tokens ≤ max-tokens / 2. */
    @Override
    public boolean tryAcquire(String target) {
        return targets.get(target).get() * 2 > maxMilli;
    }

    /** Tokens in {@code target}'s bucket, 0 to max-tokens. */
    public double tokens(String target) {
        return targets.get(target).get() / 1000.0;
    }

    /** The targets tracked so far: at most 64 by name, then one shared {@code other}. */
    public List<String> targets() {
        return targets.names();
    }

    /** What A6 calls {@code retryThrottling}: {@code maxTokens} and {@code tokenRatio}. */
    public static final class Builder {

        private int maxTokens = 10;
        private double tokenRatio = 0.1;
        private RetryListener listener = RetryListener.NONE;

        private Builder() {}

        /** The bucket's size and starting content, 1-1000 (A6 {@code maxTokens}); default 10. */
        public Builder maxTokens(int maxTokens) {
            if (maxTokens < 1 || maxTokens > 1000) {
                throw new IllegalArgumentException("max-tokens must be 1-1000, got " + maxTokens);
            }
            this.maxTokens = maxTokens;
            return this;
        }

        /** What a successful attempt puts back, above 0, at most 3 decimals kept (A6 {@code tokenRatio}); default 0.1. */
        public Builder tokenRatio(double tokenRatio) {
            if (!(tokenRatio > 0) || tokenRatio > 1000) {
                throw new IllegalArgumentException("token-ratio must be above 0 and at most 1000, got " + tokenRatio);
            }
            this.tokenRatio = tokenRatio;
            return this;
        }

        /** Told of each new target once, with a cheap, thread-safe reading of its tokens (for a gauge). */
        public Builder listener(RetryListener listener) {
            this.listener = java.util.Objects.requireNonNull(listener, "listener");
            return this;
        }

        public TokenBucket build() {
            if (tokenRatio > maxTokens) {
                throw new IllegalArgumentException(
                        "token-ratio must not be above max-tokens (" + maxTokens + "), got " + tokenRatio);
            }
            return new TokenBucket(this);
        }
    }
}
