package dev.grpcops.client;

import java.util.List;
import java.util.Map;

/** gRPC service configs (as maps, the form ManagedChannelBuilder.defaultServiceConfig takes). */
public final class ServiceConfigs {

    private ServiceConfigs() {
    }

    /** round_robin over every resolved address. */
    public static Map<String, ?> roundRobin() {
        return Map.of("loadBalancingConfig", List.of(Map.of("round_robin", Map.of())));
    }

    /** round_robin, skipping addresses whose health for {@code serviceName} is not SERVING. */
    public static Map<String, ?> healthCheckedRoundRobin(String serviceName) {
        return Map.of(
                "loadBalancingConfig", List.of(Map.of("round_robin", Map.of())),
                "healthCheckConfig", Map.of("serviceName", serviceName));
    }
}
