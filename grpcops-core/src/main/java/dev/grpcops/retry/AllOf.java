package dev.grpcops.retry;

import java.util.List;

/** {@link RetryLimiter#allOf}: asks each in turn, gives back on a refusal. */
final class AllOf implements RetryLimiter {

    private final RetryLimiter[] limiters;

    AllOf(List<RetryLimiter> limiters) {
        if (limiters.isEmpty()) {
            throw new IllegalArgumentException("allOf needs at least one limiter");
        }
        this.limiters = limiters.toArray(new RetryLimiter[0]);
    }

    @Override
    public void onCall(String target) {
        for (RetryLimiter limiter : limiters) {
            limiter.onCall(target);
        }
    }

    @Override
    public void onSuccess(String target) {
        for (RetryLimiter limiter : limiters) {
            limiter.onSuccess(target);
        }
    }

    @Override
    public void onFailure(String target) {
        for (RetryLimiter limiter : limiters) {
            limiter.onFailure(target);
        }
    }

    @Override
    public boolean tryAcquire(String target) {
        for (int i = 0; i < limiters.length; i++) {
            if (!limiters[i].tryAcquire(target)) {
                for (int j = i - 1; j >= 0; j--) {
                    limiters[j].release(target);
                }
                return false;
            }
        }
        return true;
    }

    @Override
    public void release(String target) {
        for (RetryLimiter limiter : limiters) {
            limiter.release(target);
        }
    }
}
