package dev.grpcops.autoconfigure.client;

import dev.grpcops.client.ServiceConfigs;
import io.grpc.ManagedChannelBuilder;
import java.util.Map;
import net.devh.boot.grpc.client.channelfactory.GrpcChannelConfigurer;

/**
 * Gives the configured channels round_robin with client-side health checking: every backend
 * address gets calls, and one that reports NOT_SERVING (draining, stopping) stops getting them at
 * once, before any probe or endpoint update has noticed.
 */
public final class HealthCheckedChannels implements GrpcChannelConfigurer {

    private final Map<String, String> healthServiceByClient;

    public HealthCheckedChannels(Map<String, String> healthServiceByClient) {
        this.healthServiceByClient = Map.copyOf(healthServiceByClient);
    }

    @Override
    public void accept(ManagedChannelBuilder<?> builder, String client) {
        String serviceName = healthServiceByClient.get(client);
        if (serviceName != null) {
            builder.defaultServiceConfig(ServiceConfigs.healthCheckedRoundRobin(serviceName));
        }
    }
}
