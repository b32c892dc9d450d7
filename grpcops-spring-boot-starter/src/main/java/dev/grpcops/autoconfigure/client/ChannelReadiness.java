package dev.grpcops.autoconfigure.client;

import dev.grpcops.client.ReadinessGate;
import io.grpc.ManagedChannelBuilder;
import java.time.Duration;
import net.devh.boot.grpc.client.channelfactory.GrpcChannelConfigurer;

/**
 * A {@link ReadinessGate} per channel ({@code grpcops.client.wait-for-ready-window}): calls made
 * before a channel was first READY wait for a replica within their deadline instead of failing at
 * once. The configurer puts each channel's gate on its builder; the gate follows the channel the
 * factory made through {@link ChannelFollowers}.
 */
public final class ChannelReadiness implements GrpcChannelConfigurer {

    private final Duration window;
    private final ChannelFollowers followers;

    public ChannelReadiness(Duration window, ChannelFollowers followers) {
        this.window = window;
        this.followers = followers;
    }

    @Override
    public void accept(ManagedChannelBuilder<?> builder, String name) {
        if (!window.isZero() && !window.isNegative()) {
            ReadinessGate gate = new ReadinessGate(window);
            builder.intercept(gate);
            followers.add(name, gate::follow);
        }
    }
}
