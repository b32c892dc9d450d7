/**
 * Readiness that means ready: {@link dev.grpcops.warmup.WarmUp} sends a server its own typical calls,
 * through its real port, before it reports SERVING, so that the first callers a load balancer sends
 * meet compiled code, loaded classes and open downstream connections instead of a cold JVM.
 */
package dev.grpcops.warmup;
