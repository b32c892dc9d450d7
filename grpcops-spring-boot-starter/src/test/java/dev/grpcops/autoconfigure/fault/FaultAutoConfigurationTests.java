package dev.grpcops.autoconfigure.fault;

import static org.assertj.core.api.Assertions.assertThat;

import dev.grpcops.admin.AdminMethods;
import dev.grpcops.fault.FaultInjection;
import dev.grpcops.fault.Faults;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;

class FaultAutoConfigurationTests {

    private final ApplicationContextRunner runner =
            new ApplicationContextRunner().withConfiguration(AutoConfigurations.of(FaultAutoConfiguration.class));

    @Test
    void thereButInjectingNothingByDefault() {
        runner.run(context -> {
            assertThat(context.getBean(FaultInjection.class).current()).isEqualTo(Faults.NONE);
            assertThat(context).hasBean("grpcopsFaultsService").hasBean("grpcopsFaultInterceptor");
            assertThat(context.getBeansOfType(AdminMethods.class).values())
                    .anySatisfy(methods -> assertThat(methods.fullMethodNames()).contains("grpcops.v1.Faults/Set"));
        });
    }

    @Test
    void propertiesSetWhatIsInjectedFromTheStart() {
        runner.withPropertyValues(
                        "grpcops.fault.delay=200ms",
                        "grpcops.fault.stall=100ms",
                        "grpcops.fault.stall-every=1s",
                        "grpcops.fault.error-ratio=0.5",
                        "grpcops.fault.work=2ms",
                        "grpcops.fault.replica=stock-2")
                .run(context -> assertThat(context.getBean(FaultInjection.class).current())
                        .isEqualTo(Faults.builder()
                                .delay(Duration.ofMillis(200))
                                .stall(Duration.ofMillis(100), Duration.ofSeconds(1))
                                .work(Duration.ofMillis(2))
                                .errorRatio(0.5)
                                .build()));
    }

    @Test
    void badValuesStopStartupNamingTheProperty() {
        runner.withPropertyValues("grpcops.fault.error-ratio=2")
                .run(context -> assertThat(context)
                        .getFailure()
                        .rootCause()
                        .hasMessageContaining("grpcops.fault.error-ratio must be 0-1"));
        runner.withPropertyValues("grpcops.fault.stall=1s")
                .run(context ->
                        assertThat(context).getFailure().rootCause().hasMessageContaining("grpcops.fault.stall-every"));
        runner.withPropertyValues("grpcops.fault.work=2s")
                .run(context -> assertThat(context)
                        .getFailure()
                        .rootCause()
                        .hasMessageContaining("grpcops.fault.work must be 0-1000 ms"));
    }

    @Test
    void aGaugeShowsWhatIsInjected() {
        SimpleMeterRegistry registry = new SimpleMeterRegistry();
        runner.withBean(MeterRegistry.class, () -> registry)
                .withPropertyValues("grpcops.fault.delay=250ms", "grpcops.fault.work=3ms")
                .run(context -> {
                    assertThat(registry.get("grpc.fault.delay").gauge().value()).isEqualTo(0.25);
                    assertThat(registry.get("grpc.fault.work").gauge().value()).isEqualTo(0.003);
                    context.getBean(FaultInjection.class).set(Faults.NONE);
                    assertThat(registry.get("grpc.fault.delay").gauge().value()).isZero();
                    assertThat(registry.get("grpc.fault.work").gauge().value()).isZero();
                });
    }

    @Test
    void canBeLeftOut() {
        runner.withPropertyValues("grpcops.fault.enabled=false")
                .run(context -> assertThat(context)
                        .doesNotHaveBean(FaultInjection.class)
                        .doesNotHaveBean("grpcopsFaultsService"));
    }
}
