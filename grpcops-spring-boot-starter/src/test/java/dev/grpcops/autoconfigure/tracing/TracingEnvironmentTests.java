package dev.grpcops.autoconfigure.tracing;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.springframework.aot.AotDetector;
import org.springframework.boot.SpringApplication;
import org.springframework.boot.logging.DeferredLogs;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;
import org.springframework.core.SpringProperties;
import org.springframework.core.env.MapPropertySource;
import org.springframework.core.env.StandardEnvironment;

/** Tracing is on exactly while there is an endpoint, Boot's or the OpenTelemetry SDK's variables. */
class TracingEnvironmentTests {

    private static StandardEnvironment environment(Map<String, Object> given) {
        StandardEnvironment environment = new StandardEnvironment();
        environment.getPropertySources().addFirst(new MapPropertySource("given", given));
        new TracingEnvironment(new DeferredLogs()).postProcessEnvironment(environment, new SpringApplication());
        return environment;
    }

    @Test
    void withoutAnEndpointNothingIsTraced() {
        StandardEnvironment environment = environment(Map.of());
        assertThat(environment.getProperty("management.tracing.enabled")).isEqualTo("false");
        assertThat(environment.getProperty("management.tracing.grpc.enabled")).isEqualTo("false");
        assertThat(environment.getProperty("management.otlp.tracing.endpoint")).isNull();
        assertThat(environment.getProperty("logging.pattern.correlation")).isNull();
    }

    @Test
    void bootsOwnEndpointSwitchesTracingOn() {
        StandardEnvironment environment =
                environment(Map.of("management.otlp.tracing.endpoint", "http://collector:4318/v1/traces"));
        assertThat(environment.getProperty("management.tracing.enabled")).isEqualTo("true");
        // The library's own spans take the place of Micrometer's gRPC observations.
        assertThat(environment.getProperty("management.tracing.grpc.enabled")).isEqualTo("false");
        assertThat(environment.getProperty("logging.pattern.correlation")).isEqualTo("%grpcopsCorrelation");
        // Prometheus 2.42 fails a whole scrape on an exemplar on a _count series.
        assertThat(
                        environment.getProperty(
                                "management.prometheus.metrics.export.properties.io.prometheus.exporter.exemplarsOnAllMetricTypes"))
                .isEqualTo("false");
        assertThat(environment.getProperty("management.tracing.baggage.enabled"))
                .isEqualTo("false");
    }

    @Test
    void theSdksVariablesAreMapped() {
        StandardEnvironment environment = environment(
                Map.of("OTEL_EXPORTER_OTLP_ENDPOINT", "http://collector:4318/", "OTEL_TRACES_SAMPLER_ARG", "0.25"));
        assertThat(environment.getProperty("management.otlp.tracing.endpoint"))
                .isEqualTo("http://collector:4318/v1/traces");
        assertThat(environment.getProperty("management.tracing.sampling.probability"))
                .isEqualTo("0.25");
        assertThat(environment.getProperty("management.tracing.enabled")).isEqualTo("true");

        StandardEnvironment traces = environment(Map.of(
                "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT",
                "http://x:4318/v1/traces",
                "OTEL_EXPORTER_OTLP_ENDPOINT",
                "http://y:4318",
                "OTEL_EXPORTER_OTLP_PROTOCOL",
                "grpc"));
        assertThat(traces.getProperty("management.otlp.tracing.endpoint")).isEqualTo("http://x:4318/v1/traces");
        assertThat(traces.getProperty("management.otlp.tracing.transport")).isEqualTo("grpc");
    }

    @Test
    void aZipkinEndpointKeepsExportOn() {
        StandardEnvironment environment =
                environment(Map.of("management.zipkin.tracing.endpoint", "http://zipkin:9411/api/v2/spans"));
        assertThat(environment.getProperty("management.tracing.enabled")).isEqualTo("true");
        assertThat(environment.getProperty("management.otlp.tracing.endpoint")).isNull();
    }

    @Test
    void whatTheApplicationSetsWins() {
        StandardEnvironment environment = environment(Map.of(
                "management.otlp.tracing.endpoint", "http://c:4318/v1/traces", "management.tracing.enabled", "false"));
        assertThat(environment.getProperty("management.tracing.enabled")).isEqualTo("false");
        assertThat(environment.getProperty("logging.pattern.correlation")).isNull();

        StandardEnvironment ownPattern = environment(Map.of(
                "management.otlp.tracing.endpoint", "http://c:4318/v1/traces",
                "logging.pattern.correlation", "[%X{traceId}] "));
        assertThat(ownPattern.getProperty("logging.pattern.correlation")).isEqualTo("[%X{traceId}] ");
        StandardEnvironment observations = environment(Map.of(
                "management.otlp.tracing.endpoint", "http://c:4318/v1/traces",
                "management.tracing.grpc.enabled", "true"));
        assertThat(observations.getProperty("management.tracing.grpc.enabled")).isEqualTo("true");
    }

    @Test
    @ExtendWith(OutputCaptureExtension.class)
    void anEndpointUnderBeansSpringAotMadeWithoutTracingIsAWarning(CapturedOutput output) {
        Map<String, Object> endpoint = Map.of("OTEL_EXPORTER_OTLP_ENDPOINT", "http://collector:4318");
        String warning = "runs the beans Spring AOT made at build time without tracing";
        record Case(boolean aot, Map<String, Object> given, boolean warned) {}
        Map<String, Object> endpointTracingOff =
                Map.of("OTEL_EXPORTER_OTLP_ENDPOINT", "http://collector:4318", "management.tracing.enabled", "false");
        List<Case> cases = List.of(
                new Case(false, endpoint, false),
                new Case(true, Map.of(), false),
                new Case(true, endpointTracingOff, false),
                new Case(true, endpoint, true));
        for (Case given : cases) {
            DeferredLogs logs = new DeferredLogs();
            StandardEnvironment environment = new StandardEnvironment();
            environment.getPropertySources().addFirst(new MapPropertySource("given", given.given()));
            SpringProperties.setFlag(AotDetector.AOT_ENABLED, given.aot());
            try {
                new TracingEnvironment(logs).postProcessEnvironment(environment, new SpringApplication());
            } finally {
                SpringProperties.setProperty(AotDetector.AOT_ENABLED, null);
            }
            int before = output.getAll().split(warning, -1).length;
            logs.switchOverAll();
            int after = output.getAll().split(warning, -1).length;
            assertThat(after - before).as("%s", given).isEqualTo(given.warned() ? 1 : 0);
        }
        assertThat(output.getAll()).contains("Traces are to go to http://collector:4318/v1/traces");
    }
}
