package dev.grpcops.autoconfigure.client;

import dev.grpcops.client.ReadinessGate;
import io.grpc.ManagedChannel;
import io.grpc.ManagedChannelBuilder;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import net.devh.boot.grpc.client.channelfactory.GrpcChannelConfigurer;

/**
 * A {@link ReadinessGate} per channel ({@code grpcops.client.wait-for-ready-window}): calls made
 * before a channel was first READY wait for a replica within their deadline instead of failing at once. The configurer puts each channel's gate on its builder; the channel factory hands the
 * channel it made to {@link #follow}.
 */
public final class ChannelReadiness implements GrpcChannelConfigurer {

    private final Duration window;
    private final Map<String, ReadinessGate> gates = new ConcurrentHashMap<>();

    public ChannelReadiness(Duration window) {
        this.window = window;
    }

    @Override
    public void accept(ManagedChannelBuilder<?> builder, String name) {
        if (!window.isZero() && !window.isNegative()) {
            builder.intercept(gates.computeIfAbsent(name, n -> new ReadinessGate(window)));
        }
    }

    /** The channel named {@code name} was made: its gate follows its state. */
    public void follow(String name, ManagedChannel channel) {
        ReadinessGate gate = gates.get(name);
        if (gate != null) {
            gate.follow(channel);
        }
    }
}
