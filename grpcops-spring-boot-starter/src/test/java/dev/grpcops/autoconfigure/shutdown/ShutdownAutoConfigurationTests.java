package dev.grpcops.autoconfigure.shutdown;

import static org.assertj.core.api.Assertions.assertThat;
import static org.mockito.Mockito.mock;

import dev.grpcops.shutdown.DrainBeforeStop;
import dev.grpcops.shutdown.InFlightCalls;
import dev.grpcops.spring.shutdown.DrainOnContextClose;
import dev.grpcops.spring.shutdown.ServingStatusPublisher;
import dev.grpcops.spring.shutdown.ShutdownProperties;
import io.grpc.Server;
import io.grpc.ServerServiceDefinition;
import io.grpc.health.v1.HealthCheckResponse.ServingStatus;
import io.grpc.protobuf.services.HealthStatusManager;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Duration;
import java.util.List;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import net.devh.boot.grpc.server.config.GrpcServerProperties;
import net.devh.boot.grpc.server.event.GrpcServerStartedEvent;
import net.devh.boot.grpc.server.serverfactory.GrpcServerLifecycle;
import org.junit.jupiter.api.Test;
import org.springframework.boot.actuate.autoconfigure.metrics.MetricsAutoConfiguration;
import org.springframework.boot.actuate.health.HealthIndicator;
import org.springframework.boot.actuate.health.Status;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;

class ShutdownAutoConfigurationTests {

    private final ApplicationContextRunner runner = new ApplicationContextRunner()
            .withConfiguration(AutoConfigurations.of(ShutdownAutoConfiguration.class))
            .withBean(HealthStatusManager.class)
            .withBean(GrpcServerProperties.class);

    /**
     * For tests whose context saw the server start: closing it drains, which would otherwise wait out
     * the default delay of 5 s.
     */
    private static final String NO_DRAIN_DELAY = "grpcops.shutdown.drain-delay=0s";

    @Test
    void drainsBeforeStopByDefault() {
        runner.run(context -> {
            assertThat(context)
                    .hasSingleBean(ServingStatusPublisher.class)
                    .hasSingleBean(InFlightCalls.class)
                    .hasSingleBean(DrainBeforeStop.class)
                    .hasSingleBean(DrainOnContextClose.class);
            assertThat(context.getBean(ShutdownProperties.class).getDrainDelay())
                    .isEqualTo(Duration.ofSeconds(5));
        });
    }

    @Test
    void drainDelayComesFromTheProperty() {
        runner.withPropertyValues("grpcops.shutdown.drain-delay=250ms")
                .run(context -> assertThat(
                                context.getBean(ShutdownProperties.class).getDrainDelay())
                        .isEqualTo(Duration.ofMillis(250)));
    }

    @Test
    void negativeDrainDelayStopsStartupNamingTheProperty() {
        runner.withPropertyValues("grpcops.shutdown.drain-delay=-1s")
                .run(context -> assertThat(context)
                        .getFailure()
                        .rootCause()
                        .hasMessageContaining("grpcops.shutdown.drain-delay"));
    }

    @Test
    void callsInFlightAreAGauge() {
        SimpleMeterRegistry registry = new SimpleMeterRegistry();
        runner.withBean(SimpleMeterRegistry.class, () -> registry)
                .withConfiguration(AutoConfigurations.of(MetricsAutoConfiguration.class))
                .run(context -> assertThat(registry.get("grpc.server.calls.in.flight")
                                .gauge()
                                .value())
                        .isZero());
    }

    @Test
    void servingStatusOfEveryServedNameIsAGaugeThatFollowsTheHealthService() {
        SimpleMeterRegistry registry = new SimpleMeterRegistry();
        runner.withPropertyValues(NO_DRAIN_DELAY)
                .withBean(SimpleMeterRegistry.class, () -> registry)
                .withConfiguration(AutoConfigurations.of(MetricsAutoConfiguration.class))
                .run(context -> {
                    context.publishEvent(new GrpcServerStartedEvent(
                            mock(GrpcServerLifecycle.class), serving("demo.v1.Demo"), "127.0.0.1", 1));
                    HealthStatusManager health = context.getBean(HealthStatusManager.class);

                    assertThat(registry.get("grpc.health.serving")
                                    .tag("service", "demo.v1.Demo")
                                    .gauge()
                                    .value())
                            .isEqualTo(1);
                    assertThat(registry.get("grpc.health.serving")
                                    .tag("service", "")
                                    .gauge()
                                    .value())
                            .isEqualTo(1);

                    health.setStatus("demo.v1.Demo", ServingStatus.NOT_SERVING);
                    assertThat(registry.get("grpc.health.serving")
                                    .tag("service", "demo.v1.Demo")
                                    .gauge()
                                    .value())
                            .isZero();
                    assertThat(registry.find("grpc.health.serving")
                                    .tag("service", "grpc.health.v1.Health")
                                    .gauge())
                            .as("infrastructure services are not reported")
                            .isNull();
                });
    }

    @Test
    void actuatorHealthShowsTheServingStatusOutOfServiceBeforeStartAndWhileDraining() {
        runner.withPropertyValues(NO_DRAIN_DELAY)
                .withConfiguration(AutoConfigurations.of(GrpcServingHealthAutoConfiguration.class))
                .run(context -> {
                    HealthIndicator indicator = context.getBean("grpcServingHealthIndicator", HealthIndicator.class);
                    assertThat(indicator.health().getStatus())
                            .as("before the server listens")
                            .isEqualTo(Status.OUT_OF_SERVICE);

                    context.publishEvent(new GrpcServerStartedEvent(
                            mock(GrpcServerLifecycle.class), serving("demo.v1.Demo"), "127.0.0.1", 1));
                    assertThat(indicator.health().getStatus()).isEqualTo(Status.UP);
                    assertThat(indicator.health().getDetails()).containsEntry("demo.v1.Demo", "SERVING");

                    context.getBean(HealthStatusManager.class).setStatus("demo.v1.Demo", ServingStatus.NOT_SERVING);
                    assertThat(indicator.health().getStatus()).isEqualTo(Status.OUT_OF_SERVICE);
                });
    }

    @Test
    void actuatorHealthIndicatorCanBeSwitchedOff() {
        runner.withConfiguration(AutoConfigurations.of(GrpcServingHealthAutoConfiguration.class))
                .withPropertyValues("management.health.grpc-serving.enabled=false")
                .run(context -> assertThat(context).doesNotHaveBean("grpcServingHealthIndicator"));
    }

    /** A server that reports the given services plus the infrastructure ones, as the real one does. */
    private static Server serving(String service) {
        List<ServerServiceDefinition> services = List.of(
                ServerServiceDefinition.builder(service).build(),
                ServerServiceDefinition.builder("grpc.health.v1.Health").build());
        return new Server() {
            @Override
            public Server start() {
                return this;
            }

            @Override
            public List<ServerServiceDefinition> getServices() {
                return services;
            }

            @Override
            public Server shutdown() {
                return this;
            }

            @Override
            public Server shutdownNow() {
                return this;
            }

            @Override
            public boolean isShutdown() {
                return false;
            }

            @Override
            public boolean isTerminated() {
                return false;
            }

            @Override
            public boolean awaitTermination(long timeout, TimeUnit unit) {
                return true;
            }

            @Override
            public void awaitTermination() {}
        };
    }

    @Test
    void backsOffWhenTheApplicationDefinesItsOwn() {
        InFlightCalls own = new InFlightCalls(Set.of());
        runner.withBean(InFlightCalls.class, () -> own)
                .run(context -> assertThat(context.getBean(InFlightCalls.class)).isSameAs(own));
    }

    @Test
    void drainCanBeSwitchedOff() {
        runner.withPropertyValues("grpcops.shutdown.enabled=false")
                .run(context -> assertThat(context)
                        .doesNotHaveBean(DrainBeforeStop.class)
                        .doesNotHaveBean(DrainOnContextClose.class)
                        .hasSingleBean(InFlightCalls.class));
    }

    @Test
    void withoutTheHealthServiceThereIsNothingToDrain() {
        new ApplicationContextRunner()
                .withConfiguration(AutoConfigurations.of(ShutdownAutoConfiguration.class))
                .withBean(GrpcServerProperties.class)
                .run(context -> assertThat(context)
                        .doesNotHaveBean(DrainBeforeStop.class)
                        .doesNotHaveBean(ServingStatusPublisher.class));
    }
}
