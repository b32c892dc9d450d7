package dev.grpcops.autoconfigure.server;

import dev.grpcops.server.MalformedRequests;
import dev.grpcops.server.ServerExecutor;
import dev.grpcops.server.UnknownMethods;
import io.micrometer.core.instrument.MeterRegistry;
import java.util.function.BiConsumer;
import net.devh.boot.grpc.server.serverfactory.GrpcServerConfigurer;
import net.devh.boot.grpc.server.service.GrpcServiceDefinition;
import net.devh.boot.grpc.server.service.GrpcServiceDiscoverer;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.beans.factory.config.BeanPostProcessor;
import org.springframework.beans.factory.config.ConfigurableListableBeanFactory;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnProperty;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.context.annotation.Bean;

/**
 * What no client can use to exhaust a server: per-connection call and RST_STREAM limits on the
 * Netty transport, made-up method names answered {@code UNIMPLEMENTED} and counted under no name
 * ({@code grpc_server_unknown_method_calls_total}), undecodable requests answered
 * {@code INVALID_ARGUMENT} and counted per served method ({@code grpc_server_malformed_requests_total}),
 * each logged at most once per interval; handlers on the transport's threads (direct-executor) or on
 * a bounded executor, never on one thread per call; net.devh's request scope out of every call when
 * no bean uses it.
 */
@AutoConfiguration(
        afterName = {
            "org.springframework.boot.actuate.autoconfigure.metrics.CompositeMeterRegistryAutoConfiguration",
            // After net.devh's: its interceptor configurer must have run when UnusedRequestScope runs.
            "net.devh.boot.grpc.server.autoconfigure.GrpcServerAutoConfiguration"
        })
@ConditionalOnClass(GrpcServerConfigurer.class)
@EnableConfigurationProperties(ServerLimitsProperties.class)
public class ServerLimitsAutoConfiguration {

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

    @Bean
    GrpcServerConfigurer grpcopsServerLimits(
            ServerLimitsProperties properties, ServerLimitsMeters meters, ObjectProvider<ServerExecutor> executor) {
        UnknownMethods fallback = new UnknownMethods(meters::unknownMethod, properties.getBadRequestLogInterval());
        return builder -> {
            builder.fallbackHandlerRegistry(fallback);
            if (properties.isDirectExecutor()) {
                builder.directExecutor();
            } else {
                executor.ifAvailable(pool -> builder.executor(pool.executor()));
            }
            NettyLimits.apply(builder, properties);
        };
    }

    @Bean
    static UnusedRequestScope grpcopsUnusedRequestScope(ConfigurableListableBeanFactory beans) {
        return new UnusedRequestScope(beans);
    }

    /** Wraps net.devh's discovered services so that their requests are parsed by {@link MalformedRequests}. */
    @Bean
    static BeanPostProcessor grpcopsMalformedRequests(
            ObjectProvider<ServerLimitsProperties> properties, ObjectProvider<ServerLimitsMeters> meters) {
        return new BeanPostProcessor() {
            @Override
            public Object postProcessAfterInitialization(Object bean, String beanName) {
                if (!(bean instanceof GrpcServiceDiscoverer discoverer)) {
                    return bean;
                }
                ServerLimitsMeters counted = meters.getObject();
                BiConsumer<String, RuntimeException> onMalformed = MalformedRequests.logged(
                        properties.getObject().getBadRequestLogInterval(),
                        (method, failure) -> counted.malformed(method));
                return (GrpcServiceDiscoverer) () -> discoverer.findGrpcServices().stream()
                        .map(service -> new GrpcServiceDefinition(
                                service.getBeanName(),
                                service.getBeanClazz(),
                                MalformedRequests.guard(service.getDefinition(), onMalformed)))
                        .toList();
            }
        };
    }
}
