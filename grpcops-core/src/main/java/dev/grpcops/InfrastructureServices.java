package dev.grpcops;

import java.util.List;

/**
 * The gRPC services every grpcops server brings along (health, reflection, fault injection's admin
 * service): they get no budget, no health name of their own, are never queued by admission, and
 * their long-lived streams do not hold up a stop.
 */
public final class InfrastructureServices {

    public static final List<String> NAMES = List.of(
            "grpc.health.v1.Health",
            "grpc.reflection.v1alpha.ServerReflection",
            "grpc.reflection.v1.ServerReflection",
            "grpcops.v1.Faults");

    private InfrastructureServices() {}
}
