package dev.grpcops.springgrpc.tracing;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.Map;
import org.junit.jupiter.api.Test;
import org.springframework.boot.SpringApplication;
import org.springframework.boot.logging.DeferredLogs;
import org.springframework.core.env.MapPropertySource;
import org.springframework.core.env.StandardEnvironment;

/** Tracing is on exactly while there is an endpoint: Boot 4's, Boot 3's, or the OpenTelemetry SDK's variables. */
class TracingEnvironmentTests {

    private static final String ENDPOINT = "management.opentelemetry.tracing.export.otlp.endpoint";

    private static StandardEnvironment environment(Map<String, Object> given) {
        return environment(given, Map.of());
    }

    /** {@code given} as the application's properties, {@code variables} as the process's environment. */
    private static StandardEnvironment environment(Map<String, Object> given, Map<String, Object> variables) {
        StandardEnvironment environment = new StandardEnvironment() {
            @Override
            public Map<String, Object> getSystemEnvironment() {
                return variables;
            }
        };
        environment.getPropertySources().addFirst(new MapPropertySource("given", given));
        new TracingEnvironment(new DeferredLogs()).postProcessEnvironment(environment, new SpringApplication());
        return environment;
    }

    @Test
    void withoutAnEndpointNothingIsExported() {
        StandardEnvironment environment = environment(Map.of());
        assertThat(environment.getProperty("management.tracing.export.enabled")).isEqualTo("false");
        assertThat(environment.getProperty(ENDPOINT)).isNull();
        assertThat(environment.getProperty("logging.pattern.correlation")).isNull();
    }

    @Test
    void bootsOwnEndpointSwitchesTracingOn() {
        StandardEnvironment environment = environment(Map.of(ENDPOINT, "http://collector:4318/v1/traces"));
        assertThat(environment.getProperty("management.tracing.export.enabled")).isEqualTo("true");
        assertThat(environment.getProperty("logging.pattern.correlation")).isEqualTo("%grpcopsCorrelation");
        // Prometheus 2.42 fails a whole scrape on an exemplar on a _count series.
        assertThat(environment.getProperty(
                        "management.prometheus.metrics.export.properties.io.prometheus.exporter.exemplarsOnAllMetricTypes"))
                .isEqualTo("false");
        assertThat(environment.getProperty("management.tracing.baggage.enabled")).isEqualTo("false");
    }

    @Test
    void aZipkinEndpointKeepsExportOn() {
        StandardEnvironment environment =
                environment(Map.of("management.zipkin.tracing.endpoint", "http://zipkin:9411/api/v2/spans"));
        assertThat(environment.getProperty("management.tracing.export.enabled")).isEqualTo("true");
        assertThat(environment.getProperty(ENDPOINT)).isNull();
    }

    @Test
    void boot3sExportSettingsAreTakenAsBoot4s() {
        StandardEnvironment environment = environment(Map.of(
                "management.otlp.tracing.endpoint", "http://collector:4318/v1/traces",
                "management.otlp.tracing.headers.authorization", "Bearer t",
                "management.otlp.tracing.transport", "grpc"));
        assertThat(environment.getProperty(ENDPOINT)).isEqualTo("http://collector:4318/v1/traces");
        assertThat(environment.getProperty("management.opentelemetry.tracing.export.otlp.headers.authorization"))
                .isEqualTo("Bearer t");
        assertThat(environment.getProperty("management.opentelemetry.tracing.export.otlp.transport"))
                .isEqualTo("grpc");
        assertThat(environment.getProperty("management.tracing.export.enabled")).isEqualTo("true");

        StandardEnvironment both = environment(Map.of(
                "management.otlp.tracing.endpoint", "http://old:4318/v1/traces", ENDPOINT, "http://new:4318/v1/traces"));
        assertThat(both.getProperty(ENDPOINT)).as("Boot 4's own name wins").isEqualTo("http://new:4318/v1/traces");
    }

    @Test
    void theSdksVariablesSwitchTracingOnAndBootMapsThem() {
        StandardEnvironment environment =
                environment(Map.of(), Map.of("OTEL_EXPORTER_OTLP_ENDPOINT", "http://collector:4318"));
        assertThat(environment.getProperty("management.tracing.export.enabled")).isEqualTo("true");
        assertThat(environment.getProperty(ENDPOINT)).as("Boot 4's own post-processor maps it").isNull();

        StandardEnvironment notMapped = environment(
                Map.of("management.opentelemetry.map-environment-variables", "false"),
                Map.of("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "http://collector:4318/v1/traces"));
        assertThat(notMapped.getProperty("management.tracing.export.enabled")).isEqualTo("false");

        StandardEnvironment asAProperty =
                environment(Map.of("OTEL_EXPORTER_OTLP_ENDPOINT", "http://collector:4318"), Map.of());
        assertThat(asAProperty.getProperty("management.tracing.export.enabled"))
                .as("Boot maps the variable from the process's environment only")
                .isEqualTo("false");
    }

    @Test
    void whatTheApplicationSetsWins() {
        StandardEnvironment environment =
                environment(Map.of(ENDPOINT, "http://c:4318/v1/traces", "management.tracing.export.enabled", "false"));
        assertThat(environment.getProperty("management.tracing.export.enabled")).isEqualTo("false");
        assertThat(environment.getProperty("logging.pattern.correlation")).isNull();

        StandardEnvironment ownPattern = environment(
                Map.of(ENDPOINT, "http://c:4318/v1/traces", "logging.pattern.correlation", "[%X{traceId}] "));
        assertThat(ownPattern.getProperty("logging.pattern.correlation")).isEqualTo("[%X{traceId}] ");

        StandardEnvironment baggage =
                environment(Map.of(ENDPOINT, "http://c:4318/v1/traces", "management.tracing.baggage.enabled", "true"));
        assertThat(baggage.getProperty("management.tracing.baggage.enabled")).isEqualTo("true");
    }
}
