package dev.grpcops.autoconfigure.admission;

import static org.assertj.core.api.Assertions.assertThat;

import dev.grpcops.admission.AdaptiveLimit;
import dev.grpcops.admission.Admission;
import dev.grpcops.admission.AdmissionConfig;
import dev.grpcops.admission.Caller;
import dev.grpcops.admission.CallerPolicy;
import dev.grpcops.admission.Criticality;
import dev.grpcops.admission.QueueOrder;
import dev.grpcops.autoconfigure.budget.BudgetAutoConfiguration;
import dev.grpcops.spring.admission.AdmissionProperties;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.net.InetSocketAddress;
import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.springframework.boot.actuate.autoconfigure.metrics.MetricsAutoConfiguration;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;

class AdmissionAutoConfigurationTests {

    private final SimpleMeterRegistry registry = new SimpleMeterRegistry();
    private final ApplicationContextRunner runner = new ApplicationContextRunner()
            .withBean(SimpleMeterRegistry.class, () -> registry)
            .withConfiguration(AutoConfigurations.of(
                    MetricsAutoConfiguration.class, BudgetAutoConfiguration.class, AdmissionAutoConfiguration.class));

    @Test
    void onByDefaultWithThreeLevelsSharingTheSeats() {
        runner.run(context -> {
            assertThat(context).hasBean("grpcopsAdmissionInterceptor").hasBean("grpcopsCallerForwardingInterceptor");
            Admission admission = context.getBean(Admission.class);
            assertThat(admission.limit()).isEqualTo(128);
            assertThat(admission.levels())
                    .extracting(Admission.Level::name)
                    .containsExactly("critical", "default", "sheddable");
            assertThat(admission.levels())
                    .extracting(Admission.Level::nominalSeats)
                    .containsExactly(64, 45, 20);
        });
    }

    @Test
    void publishesTheAdmissionMetricsPerLevelWithoutACallerLabel() {
        runner.run(context -> {
            context.getBean(Admission.class);
            assertThat(registry.find("grpc.admission.rejected")
                            .tags("priority_level", "default", "reason", "queue-full")
                            .counter())
                    .isNotNull();
            assertThat(registry.find("grpc.admission.dispatched")
                            .tag("priority_level", "critical")
                            .functionCounter())
                    .isNotNull();
            assertThat(registry.find("grpc.admission.wait")
                            .tag("priority_level", "sheddable")
                            .timer())
                    .isNotNull();
            assertThat(registry.find("grpc.admission.limit.seats")
                            .tag("priority_level", "critical")
                            .gauge()
                            .value())
                    .isEqualTo(64);
            assertThat(registry.find("grpc.admission.inqueue.requests").gauges())
                    .hasSize(3);
            assertThat(registry.find("grpc.admission.executing.seats").gauges()).hasSize(3);
            assertThat(registry.getMeters())
                    .allSatisfy(meter -> assertThat(meter.getId().getTags())
                            .noneMatch(tag -> tag.getKey().contains("caller")));
        });
    }

    @Test
    void operatorsMapCallersToLevelsAndCapTheirCriticality() {
        runner.withPropertyValues(
                        "grpcops.admission.limit=40",
                        "grpcops.admission.levels.batch.shares=5",
                        "grpcops.admission.levels.batch.queues=0",
                        "grpcops.admission.callers.nightly-export.level=batch",
                        "grpcops.admission.callers.mobile-app.max-criticality=default")
                .run(context -> {
                    CallerPolicy policy = context.getBean(CallerPolicy.class);
                    InetSocketAddress peer = new InetSocketAddress("10.0.0.1", 1);
                    assertThat(policy.levelOf(policy.classify("nightly-export", "critical", peer)))
                            .isEqualTo("batch");
                    Caller mobile = policy.classify("mobile-app", "critical", peer);
                    assertThat(mobile.criticality()).isEqualTo(Criticality.DEFAULT);
                    assertThat(context.getBean(Admission.class).levels())
                            .extracting(Admission.Level::name)
                            .containsExactly("critical", "default", "sheddable", "batch");
                });
    }

    @Test
    void adaptiveSeatsAndArrivalOrderAreTurnedOnByProperties() {
        runner.withPropertyValues(
                        "grpcops.admission.limit=40",
                        "grpcops.admission.queue-order=arrival",
                        "grpcops.admission.adaptive.enabled=true",
                        "grpcops.admission.adaptive.min-limit=16",
                        "grpcops.admission.adaptive.max-limit=256",
                        "grpcops.admission.adaptive.window=2s",
                        "grpcops.admission.adaptive.tolerance=2")
                .run(context -> {
                    Admission admission = context.getBean(Admission.class);
                    assertThat(admission.adaptsLimit()).isTrue();
                    assertThat(admission.limit())
                            .as("its first probe: the minimum, before the limit starts from 40")
                            .isEqualTo(16);
                    AdmissionConfig config =
                            context.getBean(AdmissionProperties.class).toConfig();
                    assertThat(config.queueOrder()).isEqualTo(QueueOrder.ARRIVAL);
                    assertThat(config.adaptiveLimit())
                            .isEqualTo(AdaptiveLimit.builder()
                                    .minLimit(16)
                                    .maxLimit(256)
                                    .window(Duration.ofSeconds(2))
                                    .tolerance(2)
                                    .build());
                });
        runner.run(context -> {
            assertThat(context.getBean(Admission.class).adaptsLimit())
                    .as("off by default")
                    .isFalse();
            assertThat(context.getBean(AdmissionProperties.class).toConfig().queueOrder())
                    .as("earliest deadline first by default")
                    .isEqualTo(QueueOrder.DEADLINE);
        });
    }

    @ParameterizedTest(name = "{0}={1}")
    @CsvSource({
        "grpcops.admission.limit, 0, grpcops.admission.limit",
        "grpcops.admission.levels.default.hand-size, 80, grpcops.admission.levels.default.hand-size",
        "grpcops.admission.levels.critical.shares, -1, grpcops.admission.levels.critical.shares",
        "grpcops.admission.levels.sheddable.queue-length-limit, 0, grpcops.admission.levels.sheddable.queue-length-limit",
        "grpcops.admission.callers.batch.level, bulk, grpcops.admission.callers.batch.level",
        "grpcops.admission.criticality-levels.urgent, critical, grpcops.admission.criticality-levels.urgent",
        "grpcops.admission.max-wait, 0s, grpcops.admission.max-wait",
    })
    void badSettingsStopTheStartNamingTheProperty(String property, String value, String named) {
        runner.withPropertyValues(property + "=" + value)
                .run(context -> assertThat(context).getFailure().rootCause().hasMessageContaining(named));
    }

    @Test
    void anUnknownQueueOrderStopsTheStartNamingTheProperty() {
        runner.withPropertyValues("grpcops.admission.queue-order=random")
                .run(context -> assertThat(context)
                        .getFailure()
                        .hasStackTraceContaining("Failed to bind properties under 'grpcops.admission.queue-order'"));
    }

    @ParameterizedTest(name = "{0}={1}")
    @CsvSource({
        "min-limit, 0, grpcops.admission.adaptive.min-limit",
        "max-limit, 4, grpcops.admission.adaptive.max-limit",
        "window, 0s, grpcops.admission.adaptive.window",
        "tolerance, 0.5, grpcops.admission.adaptive.tolerance",
    })
    void badAdaptiveSettingsStopTheStartNamingTheProperty(String property, String value, String named) {
        runner.withPropertyValues(
                        "grpcops.admission.adaptive.enabled=true",
                        "grpcops.admission.adaptive." + property + "=" + value)
                .run(context -> assertThat(context).getFailure().rootCause().hasMessageContaining(named));
    }

    @Test
    void canBeSwitchedOff() {
        runner.withPropertyValues("grpcops.admission.enabled=false")
                .run(context -> assertThat(context)
                        .doesNotHaveBean(Admission.class)
                        .doesNotHaveBean("grpcopsAdmissionInterceptor"));
    }
}
