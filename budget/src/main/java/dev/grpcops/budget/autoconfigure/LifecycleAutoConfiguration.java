package dev.grpcops.budget.autoconfigure;

import dev.grpcops.lifecycle.DrainBeforeStop;
import dev.grpcops.lifecycle.InFlightCalls;
import dev.grpcops.lifecycle.ServingStatusPublisher;
import dev.grpcops.lifecycle.ShutdownProperties;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.composite.CompositeMeterRegistry;
import java.util.HashSet;
import net.devh.boot.grpc.server.config.GrpcServerProperties;
import net.devh.boot.grpc.server.interceptor.GrpcGlobalServerInterceptor;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.condition.ConditionalOnProperty;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.context.ApplicationContext;
import io.grpc.protobuf.services.HealthStatusManager;
import net.devh.boot.grpc.server.event.GrpcServerStartedEvent;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.context.annotation.Bean;

/**
 * The server's lifecycle on net.devh's {@link HealthStatusManager}: health names for every served
 * service once it listens, and drain-before-stop when it is told to stop.
 */
@AutoConfiguration(afterName = {"net.devh.boot.grpc.server.autoconfigure.GrpcHealthServiceAutoConfiguration",
    "org.springframework.boot.actuate.autoconfigure.metrics.CompositeMeterRegistryAutoConfiguration"})
@ConditionalOnClass({GrpcServerStartedEvent.class, HealthStatusManager.class})
@EnableConfigurationProperties(ShutdownProperties.class)
public class LifecycleAutoConfiguration {

    @Bean
    @ConditionalOnMissingBean
    @ConditionalOnBean(HealthStatusManager.class)
    ServingStatusPublisher servingStatusPublisher(HealthStatusManager health) {
        return new ServingStatusPublisher(health);
    }

    @Bean
    @ConditionalOnMissingBean
    @GrpcGlobalServerInterceptor
    InFlightCalls inFlightCalls(ShutdownProperties properties, ObjectProvider<MeterRegistry> registry) {
        return new InFlightCalls(new HashSet<>(properties.getLongLivedServices()),
                registry.getIfAvailable(CompositeMeterRegistry::new));
    }

    @Bean
    @ConditionalOnMissingBean
    @ConditionalOnBean(HealthStatusManager.class)
    @ConditionalOnProperty(prefix = "grpcops.shutdown", name = "enabled", matchIfMissing = true)
    DrainBeforeStop drainBeforeStop(ApplicationContext context, HealthStatusManager health, InFlightCalls inFlight,
            ShutdownProperties properties, GrpcServerProperties server) {
        return new DrainBeforeStop(context, health, inFlight, properties.getDrainDelay(), server.getShutdownGracePeriod());
    }
}
