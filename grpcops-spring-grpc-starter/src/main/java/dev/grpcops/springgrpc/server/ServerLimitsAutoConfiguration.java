package dev.grpcops.springgrpc.server;

import dev.grpcops.server.MalformedRequests;
import dev.grpcops.server.ServerExecutor;
import dev.grpcops.spring.server.ServerLimitsConfiguration;
import dev.grpcops.spring.server.ServerLimitsMeters;
import dev.grpcops.spring.server.ServerLimitsProperties;
import io.grpc.BindableService;
import io.grpc.ServerBuilder;
import io.grpc.ServerServiceDefinition;
import java.util.List;
import java.util.function.BiConsumer;
import org.aopalliance.intercept.MethodInterceptor;
import org.springframework.aop.framework.ProxyFactory;
import org.springframework.beans.factory.config.BeanPostProcessor;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Import;
import org.springframework.grpc.server.ServerBuilderCustomizer;
import org.springframework.grpc.server.service.GrpcServiceDiscoverer;
import org.springframework.grpc.server.service.GrpcServiceSpec;
import org.springframework.util.ClassUtils;

/**
 * Server limits on Spring gRPC's server builders ({@link ServerLimitsConfiguration}): requests
 * that do not parse answered {@code INVALID_ARGUMENT}, unknown methods answered and counted, the handlers' executor ({@code grpcops.server.direct-executor} or the
 * bounded one: it replaces Spring gRPC's), and on Netty the calls per connection and the rapid-reset
 * guard ({@code grpcops.server.max-concurrent-calls-per-connection}, {@code
 * grpcops.server.max-rst-frames}).
 */
@AutoConfiguration
@ConditionalOnClass(name = "org.springframework.boot.grpc.server.autoconfigure.GrpcServerAutoConfiguration")
@Import(ServerLimitsConfiguration.class)
public class ServerLimitsAutoConfiguration {

    private static final boolean PLAIN_NETTY = ClassUtils.isPresent("io.grpc.netty.NettyServerBuilder", null);

    /**
     * Wraps the services Spring gRPC discovers so that their requests are parsed by {@link
     * MalformedRequests}: one that does not parse is answered {@code INVALID_ARGUMENT}, counted and
     * logged at most once an interval, and the service keeps serving. A class proxy: the discoverer
     * keeps its own type.
     */
    @Bean
    static BeanPostProcessor grpcopsMalformedRequests(
            ObjectProvider<ServerLimitsProperties> properties, ObjectProvider<ServerLimitsMeters> meters) {
        return new BeanPostProcessor() {
            @Override
            public Object postProcessAfterInitialization(Object bean, String beanName) {
                if (!(bean instanceof GrpcServiceDiscoverer)) {
                    return bean;
                }
                ProxyFactory proxy = new ProxyFactory(bean);
                proxy.setProxyTargetClass(true);
                proxy.addAdvice((MethodInterceptor) invocation -> {
                    Object found = invocation.proceed();
                    if (!invocation.getMethod().getName().equals("findServices") || !(found instanceof List<?> specs)) {
                        return found;
                    }
                    ServerLimitsMeters counted = meters.getObject();
                    BiConsumer<String, RuntimeException> onMalformed = MalformedRequests.logged(
                            properties.getObject().getBadRequestLogInterval(),
                            (method, failure) -> counted.malformed(method));
                    return specs.stream()
                            .map(GrpcServiceSpec.class::cast)
                            .map(spec -> new GrpcServiceSpec(guarded(spec.service(), onMalformed), spec.serviceInfo()))
                            .toList();
                });
                return proxy.getProxy(bean.getClass().getClassLoader());
            }
        };
    }

    private static BindableService guarded(BindableService service, BiConsumer<String, RuntimeException> onMalformed) {
        ServerServiceDefinition definition = MalformedRequests.guard(service.bindService(), onMalformed);
        return () -> definition;
    }

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
