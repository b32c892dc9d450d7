package dev.grpcops.kubernetes;

/**
 * What the {@code kubernetes:///} resolver reports, for metrics: the module stays free of any
 * metrics library (the Spring Boot starter binds this to Micrometer). Called from the resolver's
 * threads; implementations must be thread-safe and must not block. {@code target} is the channel's
 * target as written, e.g. {@code kubernetes:///pricing.grpcops:grpc}.
 */
public interface ResolverListener {

    /** Reports nothing. */
    ResolverListener NONE = new ResolverListener() {};

    /** The ready endpoints handed to the channel changed: there are now {@code ready} of them. */
    default void endpoints(String target, int ready) {}

    /** A list or watch request to the API server failed (every failed attempt, not once per outage). */
    default void watchError(String target, Throwable cause) {}

    /** The resolver was shut down (its channel closed): forget the target. */
    default void closed(String target) {}
}
