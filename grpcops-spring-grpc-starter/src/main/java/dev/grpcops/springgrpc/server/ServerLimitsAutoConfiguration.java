package dev.grpcops.springgrpc.server;

import dev.grpcops.server.ServerExecutor;
import dev.grpcops.spring.server.ServerLimitsConfiguration;
import dev.grpcops.spring.server.ServerLimitsMeters;
import dev.grpcops.spring.server.ServerLimitsProperties;
import io.grpc.ServerBuilder;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Import;
import org.springframework.grpc.server.ServerBuilderCustomizer;
import org.springframework.util.ClassUtils;

/**
 * Server limits on Spring gRPC's server builders ({@link ServerLimitsConfiguration}): unknown
 * methods answered and counted, the handlers' executor ({@code grpcops.server.direct-executor} or the
 * bounded one: it replaces Spring gRPC's), and on Netty the calls per connection and the rapid-reset
 * guard ({@code grpcops.server.max-concurrent-calls-per-connection}, {@code
 * grpcops.server.max-rst-frames}).
 */
@AutoConfiguration
@ConditionalOnClass(name = "org.springframework.boot.grpc.server.autoconfigure.GrpcServerAutoConfiguration")
@Import(ServerLimitsConfiguration.class)
public class ServerLimitsAutoConfiguration {

    private static final boolean PLAIN_NETTY = ClassUtils.isPresent("io.grpc.netty.NettyServerBuilder", null);

    @Bean
    <T extends ServerBuilder<T>> ServerBuilderCustomizer<T> grpcopsServerLimits(
            ServerLimitsProperties properties, ServerLimitsMeters meters, ObjectProvider<ServerExecutor> executor) {
        return builder -> {
            ServerLimitsConfiguration.configure(builder, properties, meters, executor);
            if (PLAIN_NETTY && builder instanceof io.grpc.netty.NettyServerBuilder netty) {
                netty.maxConcurrentCallsPerConnection(properties.getMaxConcurrentCallsPerConnection())
                        .maxRstFramesPerWindow(
                                properties.getMaxRstFrames(),
                                (int) properties.getRstFramesWindow().toSeconds());
            }
        };
    }
}
