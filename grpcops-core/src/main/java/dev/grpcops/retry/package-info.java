/**
 * Retries that cannot become a storm: {@link dev.grpcops.retry.Retry} retries a downstream call once,
 * on {@code UNAVAILABLE}, within the deadline budget, obeying server pushback, at one hop only, and
 * only when its {@link dev.grpcops.retry.RetryLimiter} allows ({@link dev.grpcops.retry.TokenBucket},
 * gRFC A6; {@link dev.grpcops.retry.RetryBudget}, a share of recent calls). Channels called through
 * it need {@link dev.grpcops.retry.Retry#clientInterceptor()}. Thread-safe; no thread waits.
 */
package dev.grpcops.retry;
