package dev.grpcops.autoconfigure.server;

import dev.grpcops.spring.server.ServerLimitsProperties;
import io.grpc.ServerBuilder;
import org.springframework.util.ClassUtils;

/** The per-connection limits on whichever Netty transport net.devh built the server with. */
final class NettyLimits {

    private static final boolean PLAIN_NETTY = ClassUtils.isPresent("io.grpc.netty.NettyServerBuilder", null);

    private NettyLimits() {}

    static void apply(ServerBuilder<?> builder, ServerLimitsProperties properties) {
        int window = (int) properties.getRstFramesWindow().toSeconds();
        if (builder instanceof io.grpc.netty.shaded.io.grpc.netty.NettyServerBuilder netty) {
            netty.maxConcurrentCallsPerConnection(properties.getMaxConcurrentCallsPerConnection())
                    .maxRstFramesPerWindow(properties.getMaxRstFrames(), window);
        } else if (PLAIN_NETTY && builder instanceof io.grpc.netty.NettyServerBuilder netty) {
            netty.maxConcurrentCallsPerConnection(properties.getMaxConcurrentCallsPerConnection())
                    .maxRstFramesPerWindow(properties.getMaxRstFrames(), window);
        }
        // In-process servers have no connections to limit.
    }
}
