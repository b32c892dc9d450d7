package dev.grpcops.autoconfigure.client;

import dev.grpcops.spring.client.ChannelLayers;
import io.grpc.ManagedChannelBuilder;
import net.devh.boot.grpc.client.channelfactory.GrpcChannelConfigurer;

/**
 * A {@link dev.grpcops.client.ReadinessGate} per channel ({@code grpcops.client.wait-for-ready-window}):
 * calls made before a channel was first READY wait for a replica within their deadline instead of
 * failing at once. net.devh's configurer for {@link ChannelLayers#readiness}; the gate follows the
 * channel the factory made through {@link dev.grpcops.spring.client.ChannelFollowers}.
 */
public final class ChannelReadiness implements GrpcChannelConfigurer {

    private final ChannelLayers layers;

    public ChannelReadiness(ChannelLayers layers) {
        this.layers = layers;
    }

    @Override
    public void accept(ManagedChannelBuilder<?> builder, String name) {
        layers.readiness(builder, name);
    }
}
