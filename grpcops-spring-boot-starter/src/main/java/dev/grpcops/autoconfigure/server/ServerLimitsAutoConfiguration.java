package dev.grpcops.autoconfigure.server;

import dev.grpcops.server.MalformedRequests;
import dev.grpcops.server.RateLimitedLog;
import dev.grpcops.server.UnknownMethods;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.composite.CompositeMeterRegistry;
import java.util.Map;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.springframework.beans.factory.annotation.Qualifier;
import org.springframework.boot.autoconfigure.condition.ConditionalOnProperty;
import java.util.concurrent.ConcurrentHashMap;
import net.devh.boot.grpc.server.serverfactory.GrpcServerConfigurer;
import net.devh.boot.grpc.server.service.GrpcServiceDefinition;
import net.devh.boot.grpc.server.service.GrpcServiceDiscoverer;
import org.slf4j.LoggerFactory;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.beans.factory.config.BeanPostProcessor;
import org.springframework.beans.factory.config.ConfigurableListableBeanFactory;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
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
@AutoConfiguration(afterName = {"org.springframework.boot.actuate.autoconfigure.metrics.CompositeMeterRegistryAutoConfiguration",
    // After net.devh's: its interceptor configurer must have run when UnusedRequestScope runs.
    "net.devh.boot.grpc.server.autoconfigure.GrpcServerAutoConfiguration"})
@ConditionalOnClass(GrpcServerConfigurer.class)
@EnableConfigurationProperties(ServerLimitsProperties.class)
public class ServerLimitsAutoConfiguration {

    /** The executor handlers run on when they may block: bounded (grpcops.server.executor-threads). */
    @Bean(destroyMethod = "shutdown")
    @ConditionalOnProperty(prefix = "grpcops.server", name = "direct-executor", havingValue = "false", matchIfMissing = true)
    ThreadPoolExecutor grpcopsServerExecutor(ServerLimitsProperties properties) {
        AtomicInteger count = new AtomicInteger();
        ThreadPoolExecutor executor = new ThreadPoolExecutor(properties.getExecutorThreads(),
                properties.getExecutorThreads(), 60, TimeUnit.SECONDS, new LinkedBlockingQueue<>(), task -> {
                    Thread thread = new Thread(task, "grpcops-server-" + count.incrementAndGet());
                    thread.setDaemon(true);
                    return thread;
                });
        executor.allowCoreThreadTimeOut(true);
        return executor;
    }

    @Bean
    GrpcServerConfigurer grpcopsServerLimits(ServerLimitsProperties properties, ObjectProvider<MeterRegistry> registry,
            @Qualifier("grpcopsServerExecutor") ObjectProvider<ThreadPoolExecutor> executor) {
        Counter unknown = Counter.builder("grpc.server.unknown.method.calls")
                .description("Calls to methods this server does not serve, answered UNIMPLEMENTED (never tagged by name)")
                .register(registry.getIfAvailable(CompositeMeterRegistry::new));
        RateLimitedLog log = new RateLimitedLog(LoggerFactory.getLogger(UnknownMethods.class),
                properties.getBadRequestLogInterval());
        UnknownMethods fallback = new UnknownMethods(() -> {
            unknown.increment();
            log.warn("calls to methods this server does not serve: answered UNIMPLEMENTED");
        });
        return builder -> {
            builder.fallbackHandlerRegistry(fallback);
            if (properties.isDirectExecutor()) {
                builder.directExecutor();
            } else {
                executor.ifAvailable(builder::executor);
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
    static BeanPostProcessor grpcopsMalformedRequests(ObjectProvider<ServerLimitsProperties> properties,
            ObjectProvider<MeterRegistry> registry) {
        return new BeanPostProcessor() {
            @Override
            public Object postProcessAfterInitialization(Object bean, String beanName) {
                if (!(bean instanceof GrpcServiceDiscoverer discoverer)) {
                    return bean;
                }
                MalformedCounter counter = new MalformedCounter(registry, properties.getObject());
                return (GrpcServiceDiscoverer) () -> discoverer.findGrpcServices().stream()
                        .map(service -> new GrpcServiceDefinition(service.getBeanName(), service.getBeanClazz(),
                                MalformedRequests.guard(service.getDefinition(), counter::malformed)))
                        .toList();
            }
        };
    }

    /** One counter per served method, built on first use; one rate-limited log line for all. */
    private static final class MalformedCounter {

        private final ObjectProvider<MeterRegistry> registry;
        private final RateLimitedLog log;
        private final Map<String, Counter> counters = new ConcurrentHashMap<>();

        MalformedCounter(ObjectProvider<MeterRegistry> registry, ServerLimitsProperties properties) {
            this.registry = registry;
            this.log = new RateLimitedLog(LoggerFactory.getLogger(MalformedRequests.class),
                    properties.getBadRequestLogInterval());
        }

        void malformed(String method, RuntimeException failure) {
            counters.computeIfAbsent(method, m -> Counter.builder("grpc.server.malformed.requests")
                    .description("Requests that did not parse as their message type, answered INVALID_ARGUMENT")
                    .tag("method", m)
                    .register(registry.getIfAvailable(CompositeMeterRegistry::new))).increment();
            log.warn("undecodable request for " + method + " answered INVALID_ARGUMENT: " + failure.getMessage());
        }
    }
}
