package dev.grpcops.spring.client;

import dev.grpcops.client.OutlierDetection;
import dev.grpcops.client.ServiceConfigs;
import io.grpc.ManagedChannelBuilder;
import java.util.Map;

/**
 * Gives every channel the library's balancing: peak-EWMA (or round_robin) over every resolved
 * address, under outlier detection, and, for the clients named in
 * {@code grpcops.client.health-checked}, client-side health checking, so that a replica that reports
 * NOT_SERVING (draining, stopping) stops getting calls at once, before any probe has noticed.
 */
public final class ChannelServiceConfigs {

    private final Map<String, String> healthServiceByClient;
    private final ClientProperties.Balancing balancing;
    private final OutlierDetection outlierDetection;

    public ChannelServiceConfigs(ClientProperties properties) {
        this.healthServiceByClient = Map.copyOf(properties.getHealthChecked());
        this.balancing = properties.getBalancing();
        if (balancing.getCompareAllUpTo() < 0) {
            throw new IllegalArgumentException("grpcops.client.balancing.compare-all-up-to must not be negative, got "
                    + balancing.getCompareAllUpTo());
        }
        if (balancing.getSlowStart() == null || balancing.getSlowStart().isNegative()) {
            throw new IllegalArgumentException(
                    "grpcops.client.balancing.slow-start must not be negative, got " + balancing.getSlowStart());
        }
        this.outlierDetection = properties.getOutlierDetection().toConfig();
    }

    /** The service config of the channel named {@code client} (its client name, or Spring gRPC channel name). */
    public Map<String, ?> serviceConfig(String client) {
        return ServiceConfigs.builder()
                .balancing(balancing.getPolicy())
                .decay(balancing.getDecay())
                .failurePenalty(balancing.getFailurePenalty())
                .compareAllUpTo(balancing.getCompareAllUpTo())
                .slowStart(balancing.getSlowStart())
                .outlierDetection(outlierDetection)
                .healthCheck(healthServiceByClient.get(client))
                .build();
    }

    /** Gives {@code builder}, the channel named {@code client}'s, its default service config. */
    public void accept(ManagedChannelBuilder<?> builder, String client) {
        builder.defaultServiceConfig(serviceConfig(client));
    }
}
