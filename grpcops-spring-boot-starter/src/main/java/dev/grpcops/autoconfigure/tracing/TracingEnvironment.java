package dev.grpcops.autoconfigure.tracing;

import dev.grpcops.spring.tracing.TraceCorrelationConverter;
import dev.grpcops.spring.tracing.TracingDefaults;
import java.util.HashMap;
import java.util.Locale;
import java.util.Map;
import org.apache.commons.logging.Log;
import org.springframework.boot.SpringApplication;
import org.springframework.boot.env.EnvironmentPostProcessor;
import org.springframework.boot.logging.DeferredLogFactory;
import org.springframework.core.env.ConfigurableEnvironment;
import org.springframework.core.env.MapPropertySource;

/**
 * Tracing is on exactly while there is somewhere to send traces: Spring Boot's
 * {@code management.otlp.tracing.endpoint}, or the OpenTelemetry SDK's standard variables
 * ({@code OTEL_EXPORTER_OTLP_TRACES_ENDPOINT}, {@code OTEL_EXPORTER_OTLP_ENDPOINT} + {@code /v1/traces},
 * {@code OTEL_EXPORTER_OTLP_PROTOCOL}, {@code OTEL_TRACES_SAMPLER_ARG}), which are mapped to Boot's
 * properties (Boot reads {@code OTEL_SERVICE_NAME} and {@code OTEL_RESOURCE_ATTRIBUTES} itself). Without one,
 * {@code management.tracing.enabled} defaults to false: no span is made, no trace context is read or
 * sent, and nothing is exported. With one, it defaults to true, spans are sampled by
 * {@code management.tracing.sampling.probability} (Boot's 0.1), and log lines written while serving
 * carry the trace and span ids ({@link TraceCorrelationConverter}, as Boot's
 * {@code logging.pattern.correlation}). Micrometer's gRPC observations
 * ({@code management.tracing.grpc.enabled}) default to false either way: the library's own spans
 * take their place. Baggage ({@code management.tracing.baggage.enabled}) defaults to false: on, it
 * costs every call. What the application sets itself always wins.
 *
 * <p>Under Spring AOT ({@code -Dspring.aot.enabled=true}) the beans are those chosen at build time:
 * an endpoint set only at run time then traces nothing, which is logged as a warning (unless the
 * application turned tracing off itself).
 */
public final class TracingEnvironment implements EnvironmentPostProcessor {

    /** What Spring AOT generates for {@link TracingAutoConfiguration} when tracing was on at build time. */
    static final String AOT_TRACING_BEANS =
            "dev.grpcops.autoconfigure.tracing.TracingAutoConfiguration__BeanDefinitions";

    static final String ENDPOINT = "management.otlp.tracing.endpoint";
    static final String TRACING = "management.tracing.enabled";
    static final String GRPC_OBSERVATIONS = "management.tracing.grpc.enabled";

    private final Log log;

    public TracingEnvironment(DeferredLogFactory logs) {
        this.log = logs.getLog(TracingEnvironment.class);
    }

    @Override
    public void postProcessEnvironment(ConfigurableEnvironment environment, SpringApplication application) {
        Map<String, Object> defaults = new HashMap<>();
        String endpoint = environment.getProperty(ENDPOINT);
        if (blank(endpoint)) {
            String traces = environment.getProperty("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT");
            String base = environment.getProperty("OTEL_EXPORTER_OTLP_ENDPOINT");
            endpoint = !blank(traces)
                    ? traces.trim()
                    : blank(base) ? null : base.trim().replaceAll("/+$", "") + "/v1/traces";
            if (endpoint != null) {
                defaults.put(ENDPOINT, endpoint);
            }
        }
        String protocol = environment.getProperty("OTEL_EXPORTER_OTLP_PROTOCOL");
        if (protocol != null && protocol.trim().toLowerCase(Locale.ROOT).equals("grpc")) {
            defaults.put("management.otlp.tracing.transport", "grpc");
        }
        String ratio = environment.getProperty("OTEL_TRACES_SAMPLER_ARG");
        if (!blank(ratio)) {
            defaults.put("management.tracing.sampling.probability", ratio.trim());
        }
        defaults.put(GRPC_OBSERVATIONS, "false");
        TracingDefaults.add(
                defaults, environment, application.getClassLoader(), log, endpoint, TRACING, AOT_TRACING_BEANS);
        // Added last: anything the application sets wins.
        environment.getPropertySources().addLast(new MapPropertySource("grpcops-tracing", defaults));
    }

    private static boolean blank(String value) {
        return value == null || value.isBlank();
    }
}
