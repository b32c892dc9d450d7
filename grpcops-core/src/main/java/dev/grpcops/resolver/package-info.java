/**
 * The {@code list:///host:port,host:port} name resolver: a fixed set of replicas, one address each,
 * registered with gRPC's default registry.
 */
package dev.grpcops.resolver;
