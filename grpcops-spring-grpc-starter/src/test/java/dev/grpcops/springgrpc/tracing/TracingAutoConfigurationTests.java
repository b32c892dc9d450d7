package dev.grpcops.springgrpc.tracing;

import static org.assertj.core.api.Assertions.assertThat;

import dev.grpcops.springgrpc.budget.BudgetAutoConfiguration;
import dev.grpcops.tracing.GrpcTracing;
import io.opentelemetry.api.OpenTelemetry;
import org.junit.jupiter.api.Test;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;

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
}
