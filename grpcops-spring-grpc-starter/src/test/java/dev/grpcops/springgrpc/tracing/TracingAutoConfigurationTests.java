package dev.grpcops.springgrpc.tracing;

import static org.assertj.core.api.Assertions.assertThat;

import dev.grpcops.springgrpc.budget.BudgetAutoConfiguration;
import dev.grpcops.tracing.GrpcTracing;
import io.micrometer.core.instrument.binder.grpc.GrpcClientObservationContext;
import io.micrometer.core.instrument.binder.grpc.GrpcServerObservationContext;
import io.micrometer.observation.Observation;
import io.micrometer.tracing.Tracer;
import io.micrometer.tracing.handler.TracingObservationHandler;
import io.opentelemetry.api.OpenTelemetry;
import org.junit.jupiter.api.Test;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.core.Ordered;

/** The library's spans while traces are exported, on the application's OpenTelemetry; nothing otherwise. */
class TracingAutoConfigurationTests {

    private final ApplicationContextRunner runner = new ApplicationContextRunner()
            .withConfiguration(AutoConfigurations.of(BudgetAutoConfiguration.class, TracingAutoConfiguration.class))
            .withBean(OpenTelemetry.class, OpenTelemetry::noop);

    @Test
    void whileTracesAreExportedServedCallsAndAttemptsGetSpans() {
        runner.withPropertyValues("management.tracing.export.enabled=true")
                .run(context -> assertThat(context)
                        .hasSingleBean(GrpcTracing.class)
                        .hasBean("grpcopsServedCallSpans")
                        .hasBean("grpcopsServedCallTags")
                        .hasBean("grpcopsAttemptSpans"));
    }

    @Test
    void withoutExportNothing() {
        runner.withPropertyValues("management.tracing.export.enabled=false")
                .run(context -> assertThat(context).doesNotHaveBean(GrpcTracing.class));
        runner.run(context -> assertThat(context).doesNotHaveBean(GrpcTracing.class));
    }

    @Test
    void withoutOpenTelemetryNothing() {
        new ApplicationContextRunner()
                .withConfiguration(AutoConfigurations.of(TracingAutoConfiguration.class))
                .withPropertyValues("management.tracing.export.enabled=true")
                .run(context -> assertThat(context).doesNotHaveBean(GrpcTracing.class));
    }

    @Test
    void withMicrometerTracingSpringGrpcsObservationsMakeNoSpansExportedOrNot() {
        for (String export : new String[] {"true", "false"}) {
            runner.withBean(Tracer.class, () -> Tracer.NOOP)
                    .withPropertyValues("management.tracing.export.enabled=" + export)
                    .run(context -> assertThat(context).hasSingleBean(GrpcObservationsWithoutSpans.class));
        }
        runner.run(context -> assertThat(context).doesNotHaveBean(GrpcObservationsWithoutSpans.class));
    }

    @Test
    void theHandlerTakesOnlyGrpcObservationsAndStoresAnEmptyTracingContext() {
        GrpcObservationsWithoutSpans handler = new GrpcObservationsWithoutSpans(Tracer.NOOP);
        GrpcServerObservationContext served = new GrpcServerObservationContext((carrier, key) -> null);
        GrpcClientObservationContext sent = new GrpcClientObservationContext((carrier, key, value) -> {});

        assertThat(handler.supportsContext(served)).isTrue();
        assertThat(handler.supportsContext(sent)).isTrue();
        assertThat(handler.supportsContext(new Observation.Context())).as("other observations keep their spans").isFalse();
        handler.onStart(served);
        // Spring Boot's exemplar-aware meter handler requires it when the observation stops.
        TracingObservationHandler.TracingContext stored =
                served.getRequired(TracingObservationHandler.TracingContext.class);
        assertThat(stored.getSpan()).isNull();
        assertThat(handler.getOrder()).isEqualTo(Ordered.HIGHEST_PRECEDENCE);
    }
}
