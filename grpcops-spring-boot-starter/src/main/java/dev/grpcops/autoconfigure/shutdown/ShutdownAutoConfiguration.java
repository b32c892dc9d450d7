package dev.grpcops.autoconfigure.shutdown;

import dev.grpcops.admission.Admission;
import dev.grpcops.autoconfigure.GrpcopsInterceptorOrder;
import dev.grpcops.autoconfigure.warmup.WarmUpAutoConfiguration;
import dev.grpcops.shutdown.DrainBeforeStop;
import dev.grpcops.shutdown.InFlightCalls;
import dev.grpcops.spring.shutdown.DrainOnContextClose;
import dev.grpcops.spring.shutdown.ServingStatusPublisher;
import dev.grpcops.spring.shutdown.ShutdownConfiguration;
import dev.grpcops.spring.shutdown.ShutdownProperties;
import io.grpc.protobuf.services.HealthStatusManager;
import java.util.HashSet;
import net.devh.boot.grpc.server.config.GrpcServerProperties;
import net.devh.boot.grpc.server.event.GrpcServerStartedEvent;
import net.devh.boot.grpc.server.interceptor.GrpcGlobalServerInterceptor;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnProperty;
import org.springframework.context.ApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Import;
import org.springframework.core.annotation.Order;

/**
 * The server's lifecycle on net.devh's {@link HealthStatusManager}: health names for every served
 * service once it listens and has warmed up ({@link dev.grpcops.spring.warmup.WarmUpBeforeServing}, when there is one), the calls in flight ({@code grpc_server_calls_in_flight}), and
 * drain-before-stop when it is told to stop (calls queued for admission then end UNAVAILABLE).
 */
@AutoConfiguration(
        after = WarmUpAutoConfiguration.class,
        afterName = {
            "net.devh.boot.grpc.server.autoconfigure.GrpcHealthServiceAutoConfiguration",
            "org.springframework.boot.actuate.autoconfigure.metrics.CompositeMeterRegistryAutoConfiguration"
        })
@ConditionalOnClass({GrpcServerStartedEvent.class, HealthStatusManager.class})
@Import(ShutdownConfiguration.class)
public class ShutdownAutoConfiguration {

    @Bean
    @ConditionalOnMissingBean
    @GrpcGlobalServerInterceptor
    @Order(GrpcopsInterceptorOrder.IN_FLIGHT)
    InFlightCalls inFlightCalls(ShutdownProperties properties) {
        return new InFlightCalls(new HashSet<>(properties.getLongLivedServices()));
    }

    @Bean
    @ConditionalOnMissingBean
    @ConditionalOnBean(HealthStatusManager.class)
    @ConditionalOnProperty(prefix = "grpcops.shutdown", name = "enabled", matchIfMissing = true)
    DrainBeforeStop drainBeforeStop(
            HealthStatusManager health,
            InFlightCalls inFlight,
            ShutdownProperties properties,
            GrpcServerProperties server,
            ObjectProvider<Admission> admissions) {
        return ShutdownConfiguration.drainBeforeStop(
                health, inFlight, properties, server.getShutdownGracePeriod(), admissions);
    }

    @Bean
    ServerStartedListener grpcopsServerStartedListener(
            ObjectProvider<ServingStatusPublisher> publisher, ObjectProvider<DrainOnContextClose> drain) {
        return new ServerStartedListener(publisher, drain);
    }

    @Bean
    @ConditionalOnBean(DrainBeforeStop.class)
    DrainOnContextClose drainOnContextClose(ApplicationContext context, DrainBeforeStop drain) {
        return new DrainOnContextClose(context, drain);
    }
}
