package dev.grpcops.autoconfigure.drain;

import static org.assertj.core.api.Assertions.assertThat;

import dev.grpcops.drain.DrainBeforeStop;
import dev.grpcops.drain.InFlightCalls;
import io.grpc.protobuf.services.HealthStatusManager;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Duration;
import java.util.Set;
import net.devh.boot.grpc.server.config.GrpcServerProperties;
import org.junit.jupiter.api.Test;
import org.springframework.boot.actuate.autoconfigure.metrics.MetricsAutoConfiguration;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;

class DrainAutoConfigurationTests {

    private final ApplicationContextRunner runner = new ApplicationContextRunner()
            .withConfiguration(AutoConfigurations.of(DrainAutoConfiguration.class))
            .withBean(HealthStatusManager.class)
            .withBean(GrpcServerProperties.class);

    @Test
    void drainsBeforeStopByDefault() {
        runner.run(context -> {
            assertThat(context).hasSingleBean(ServingStatusPublisher.class)
                    .hasSingleBean(InFlightCalls.class)
                    .hasSingleBean(DrainBeforeStop.class)
                    .hasSingleBean(DrainOnContextClose.class);
            assertThat(context.getBean(ShutdownProperties.class).getDrainDelay()).isEqualTo(Duration.ofSeconds(5));
        });
    }

    @Test
    void drainDelayComesFromTheProperty() {
        runner.withPropertyValues("grpcops.shutdown.drain-delay=250ms").run(context ->
                assertThat(context.getBean(ShutdownProperties.class).getDrainDelay()).isEqualTo(Duration.ofMillis(250)));
    }

    @Test
    void negativeDrainDelayStopsStartupNamingTheProperty() {
        runner.withPropertyValues("grpcops.shutdown.drain-delay=-1s").run(context ->
                assertThat(context).getFailure().rootCause().hasMessageContaining("grpcops.shutdown.drain-delay"));
    }

    @Test
    void callsInFlightAreAGauge() {
        SimpleMeterRegistry registry = new SimpleMeterRegistry();
        runner.withBean(SimpleMeterRegistry.class, () -> registry)
                .withConfiguration(AutoConfigurations.of(MetricsAutoConfiguration.class)).run(context ->
                assertThat(registry.get("grpc.server.calls.in.flight").gauge().value()).isZero());
    }

    @Test
    void backsOffWhenTheApplicationDefinesItsOwn() {
        InFlightCalls own = new InFlightCalls(Set.of());
        runner.withBean(InFlightCalls.class, () -> own).run(context ->
                assertThat(context.getBean(InFlightCalls.class)).isSameAs(own));
    }

    @Test
    void drainCanBeSwitchedOff() {
        runner.withPropertyValues("grpcops.shutdown.enabled=false").run(context ->
                assertThat(context).doesNotHaveBean(DrainBeforeStop.class).doesNotHaveBean(DrainOnContextClose.class)
                        .hasSingleBean(InFlightCalls.class));
    }

    @Test
    void withoutTheHealthServiceThereIsNothingToDrain() {
        new ApplicationContextRunner()
                .withConfiguration(AutoConfigurations.of(DrainAutoConfiguration.class))
                .withBean(GrpcServerProperties.class)
                .run(context -> assertThat(context).doesNotHaveBean(DrainBeforeStop.class)
                        .doesNotHaveBean(ServingStatusPublisher.class));
    }
}
