package dev.grpcops.springgrpc.shutdown;

import dev.grpcops.admission.Admission;
import dev.grpcops.shutdown.DrainBeforeStop;
import dev.grpcops.shutdown.InFlightCalls;
import dev.grpcops.spring.shutdown.DrainOnContextClose;
import dev.grpcops.spring.shutdown.ServingStatusPublisher;
import dev.grpcops.spring.shutdown.ShutdownConfiguration;
import dev.grpcops.spring.shutdown.ShutdownProperties;
import dev.grpcops.springgrpc.GrpcopsInterceptorOrder;
import dev.grpcops.springgrpc.warmup.WarmUpAutoConfiguration;
import io.grpc.protobuf.services.HealthStatusManager;
import java.time.Duration;
import java.util.HashSet;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnProperty;
import org.springframework.boot.context.properties.bind.Binder;
import org.springframework.context.ApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Import;
import org.springframework.core.annotation.Order;
import org.springframework.core.env.Environment;
import org.springframework.grpc.server.GlobalServerInterceptor;

/**
 * The server's lifecycle on Spring gRPC's {@link HealthStatusManager}: health names for every
 * served service once the server listens and has warmed up, the calls in flight ({@code
 * grpc_server_calls_in_flight}), and drain-before-stop when the application stops, before Spring
 * gRPC's own graceful shutdown (within {@code spring.grpc.server.shutdown.grace-period}: one grace,
 * Spring gRPC's). The name {@code ""} stays Spring gRPC's, which its health scheduler may set from
 * the application's health; the library sets the service names.
 */
@AutoConfiguration(
        after = WarmUpAutoConfiguration.class,
        afterName = {
            "org.springframework.boot.grpc.server.autoconfigure.health.GrpcServerHealthAutoConfiguration",
            "org.springframework.boot.micrometer.metrics.autoconfigure.CompositeMeterRegistryAutoConfiguration"
        })
@ConditionalOnClass(name = "org.springframework.boot.grpc.server.autoconfigure.GrpcServerAutoConfiguration", value = HealthStatusManager.class)
@Import(ShutdownConfiguration.class)
public class ShutdownAutoConfiguration {

    /** Spring gRPC's own default for {@code spring.grpc.server.shutdown.grace-period}. */
    static final Duration SPRING_GRPC_GRACE = Duration.ofSeconds(30);

    @Bean
    @ConditionalOnMissingBean
    @GlobalServerInterceptor
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
            Environment environment,
            ObjectProvider<Admission> admissions) {
        Duration grace = Binder.get(environment)
                .bind("spring.grpc.server.shutdown.grace-period", Duration.class)
                .orElse(SPRING_GRPC_GRACE);
        return ShutdownConfiguration.drainBeforeStop(health, inFlight, properties, grace, admissions);
    }

    @Bean
    @ConditionalOnBean(DrainBeforeStop.class)
    DrainOnContextClose drainOnContextClose(ApplicationContext context, DrainBeforeStop drain) {
        return new DrainOnContextClose(context, drain);
    }

    @Bean
    ServerStartedListener grpcopsServerStartedListener(
            ObjectProvider<ServingStatusPublisher> publisher, ObjectProvider<DrainOnContextClose> drain) {
        return new ServerStartedListener(publisher, drain);
    }
}
