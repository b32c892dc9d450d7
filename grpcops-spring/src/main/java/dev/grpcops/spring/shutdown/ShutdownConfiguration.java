package dev.grpcops.spring.shutdown;

import dev.grpcops.admission.Admission;
import dev.grpcops.shutdown.DrainBeforeStop;
import dev.grpcops.shutdown.InFlightCalls;
import dev.grpcops.spring.warmup.WarmUpBeforeServing;
import io.grpc.protobuf.services.HealthStatusManager;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.binder.MeterBinder;
import java.time.Duration;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/**
 * The server lifecycle's beans, whichever integration runs the server: the served names in its
 * {@link HealthStatusManager} ({@link ServiceReadiness}, {@link ServingStatusPublisher}) and the
 * gauge of the calls in flight. Imported by each starter's shutdown auto-configuration, which
 * registers {@link InFlightCalls} as a global server interceptor, makes the {@link DrainBeforeStop}
 * ({@link #drainBeforeStop}) with its integration's grace, and tells these of every server started.
 */
@Configuration(proxyBeanMethods = false)
@EnableConfigurationProperties(ShutdownProperties.class)
public class ShutdownConfiguration {

    @Bean
    @ConditionalOnMissingBean
    @ConditionalOnBean(HealthStatusManager.class)
    ServiceReadiness serviceReadiness(HealthStatusManager health) {
        return new ServiceReadiness(health);
    }

    @Bean
    @ConditionalOnMissingBean
    @ConditionalOnBean(HealthStatusManager.class)
    ServingStatusPublisher servingStatusPublisher(
            ServiceReadiness readiness,
            ObjectProvider<MeterRegistry> registry,
            ObjectProvider<WarmUpBeforeServing> warmUp) {
        return new ServingStatusPublisher(readiness, registry, warmUp.getIfAvailable());
    }

    @Bean
    MeterBinder grpcopsInFlightGauge(InFlightCalls inFlight) {
        return registry -> Gauge.builder("grpc.server.calls.in.flight", inFlight, InFlightCalls::count)
                .description("Calls being served, long-lived streams such as health Watch left out")
                .register(registry);
    }

    /**
     * The drain a starter runs when the context closes: {@code NOT_SERVING} for {@code
     * grpcops.shutdown.drain-delay} while calls are still served, calls queued for admission ended
     * {@code UNAVAILABLE}, then GOAWAY and {@code grace} for the calls in flight (the integration's
     * own shutdown grace, so that there is one).
     */
    public static DrainBeforeStop drainBeforeStop(
            HealthStatusManager health,
            InFlightCalls inFlight,
            ShutdownProperties properties,
            Duration grace,
            ObjectProvider<Admission> admissions) {
        return DrainBeforeStop.builder(health, inFlight)
                .drainDelay(properties.getDrainDelay())
                .grace(grace)
                .whenDraining(() -> admissions.orderedStream().forEach(Admission::drain))
                .build();
    }
}
