package dev.grpcops.spring.server;

import dev.grpcops.server.ServerExecutor;
import dev.grpcops.server.UnknownMethods;
import io.grpc.ServerBuilder;
import io.micrometer.core.instrument.MeterRegistry;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.condition.ConditionalOnProperty;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/**
 * Server limits' beans, whichever integration builds the server: the bounded executor handlers run
 * on when they may block ({@code grpcops.server.executor-*}, unless {@code
 * grpcops.server.direct-executor}) and the meters of what the guards refuse. Imported by each
 * starter's server auto-configuration, which gives its integration's server builder {@link
 * #configure} and its connection limits.
 */
@Configuration(proxyBeanMethods = false)
@EnableConfigurationProperties(ServerLimitsProperties.class)
public class ServerLimitsConfiguration {

    /** The executor handlers run on when they may block: bounded threads and queue. */
    @Bean
    @ConditionalOnProperty(
            prefix = "grpcops.server",
            name = "direct-executor",
            havingValue = "false",
            matchIfMissing = true)
    ServerExecutor grpcopsServerExecutor(ServerLimitsProperties properties) {
        return new ServerExecutor(
                properties.getExecutorThreads(), properties.getExecutorQueue(), properties.getBadRequestLogInterval());
    }

    /** Counted when a meter registry is there, nowhere otherwise. */
    @Bean
    ServerLimitsMeters grpcopsServerLimitsMeters(ObjectProvider<MeterRegistry> registry) {
        return new ServerLimitsMeters(registry);
    }

    /**
     * What every server builder gets, whatever its transport: calls to methods it does not serve
     * answered {@code UNIMPLEMENTED} and counted (never logged one by one), and the executor: the
     * transport's threads ({@code grpcops.server.direct-executor}) or the bounded one.
     */
    public static void configure(
            ServerBuilder<?> builder,
            ServerLimitsProperties properties,
            ServerLimitsMeters meters,
            ObjectProvider<ServerExecutor> executor) {
        builder.fallbackHandlerRegistry(
                new UnknownMethods(meters::unknownMethod, properties.getBadRequestLogInterval()));
        if (properties.isDirectExecutor()) {
            builder.directExecutor();
        } else {
            executor.ifAvailable(pool -> builder.executor(pool.executor()));
        }
    }
}
