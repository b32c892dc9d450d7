/**
 * What no client can use to make a server fail or fill its log:
 * {@link dev.grpcops.guard.MalformedRequests} answers undecodable requests {@code INVALID_ARGUMENT},
 * {@link dev.grpcops.guard.UnknownMethods} answers made-up method names {@code UNIMPLEMENTED} without
 * a metric series each, and {@link dev.grpcops.guard.RateLimitedLog} logs either at most once per interval.
 */
package dev.grpcops.guard;
