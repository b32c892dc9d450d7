package dev.grpcops.autoconfigure.server;

import dev.grpcops.server.MalformedRequests;
import dev.grpcops.server.ServerExecutor;
import dev.grpcops.spring.server.ServerLimitsConfiguration;
import dev.grpcops.spring.server.ServerLimitsMeters;
import dev.grpcops.spring.server.ServerLimitsProperties;
import java.util.function.BiConsumer;
import net.devh.boot.grpc.server.serverfactory.GrpcServerConfigurer;
import net.devh.boot.grpc.server.service.GrpcServiceDefinition;
import net.devh.boot.grpc.server.service.GrpcServiceDiscoverer;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.beans.factory.config.BeanPostProcessor;
import org.springframework.beans.factory.config.ConfigurableListableBeanFactory;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Import;

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
@Import(ServerLimitsConfiguration.class)
public class ServerLimitsAutoConfiguration {

    @Bean
    GrpcServerConfigurer grpcopsServerLimits(
            ServerLimitsProperties properties, ServerLimitsMeters meters, ObjectProvider<ServerExecutor> executor) {
        return builder -> {
            ServerLimitsConfiguration.configure(builder, properties, meters, executor);
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
