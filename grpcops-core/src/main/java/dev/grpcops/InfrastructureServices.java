package dev.grpcops;

import java.util.List;

/**
 * The gRPC services every net.devh server brings along (health, reflection): they get no budget,
 * no health name of their own, and their long-lived streams do not hold up a stop.
 */
public final class InfrastructureServices {

    public static final List<String> NAMES = List.of(
            "grpc.health.v1.Health", "grpc.reflection.v1alpha.ServerReflection", "grpc.reflection.v1.ServerReflection");

    private InfrastructureServices() {
    }
}
