package dev.grpcops.springgrpc.tracing;

import dev.grpcops.spring.tracing.TraceCorrelationConverter;
import dev.grpcops.spring.tracing.TracingDefaults;
import java.util.HashMap;
import java.util.Map;
import org.apache.commons.logging.Log;
import org.springframework.boot.EnvironmentPostProcessor;
import org.springframework.boot.SpringApplication;
import org.springframework.boot.logging.DeferredLogFactory;
import org.springframework.core.env.ConfigurableEnvironment;
import org.springframework.core.env.MapPropertySource;

/**
 * Tracing is on exactly while there is somewhere to send traces: Spring Boot 4's {@code
 * management.opentelemetry.tracing.export.otlp.endpoint}, Boot 3's {@code management.otlp.tracing.endpoint}
 * (taken as the former, which Boot 4 alone reads), or the OpenTelemetry SDK's variables {@code
 * OTEL_EXPORTER_OTLP_TRACES_ENDPOINT} and {@code OTEL_EXPORTER_OTLP_ENDPOINT} (which Boot 4 maps
 * itself, with {@code OTEL_EXPORTER_OTLP_PROTOCOL}, {@code OTEL_TRACES_SAMPLER_ARG} and the rest).
 * Without one, {@code management.tracing.export.enabled} defaults to false: the library makes no
 * span and nothing is exported. With one, it defaults to true, spans are sampled by {@code
 * management.tracing.sampling.probability} (Boot's 0.1), and log lines written while serving carry
 * the trace and span ids ({@link TraceCorrelationConverter}, as Boot's {@code
 * logging.pattern.correlation}). Baggage ({@code management.tracing.baggage.enabled}) defaults to
 * false: on, it costs every call. What the application sets itself always wins.
 *
 * <p>Under Spring AOT ({@code -Dspring.aot.enabled=true}) the beans are those chosen at build time:
 * an endpoint set only at run time then traces nothing, which is logged as a warning (unless the
 * application turned export off itself).
 */
public final class TracingEnvironment implements EnvironmentPostProcessor {

    /** What Spring AOT generates for {@link TracingAutoConfiguration} when tracing was on at build time. */
    static final String AOT_TRACING_BEANS =
            "dev.grpcops.springgrpc.tracing.TracingAutoConfiguration__BeanDefinitions";

    static final String ENDPOINT = "management.opentelemetry.tracing.export.otlp.endpoint";
    static final String BOOT3_ENDPOINT = "management.otlp.tracing.endpoint";
    static final String EXPORT = "management.tracing.export.enabled";
    static final String MAP_VARIABLES = "management.opentelemetry.map-environment-variables";

    private final Log log;

    public TracingEnvironment(DeferredLogFactory logs) {
        this.log = logs.getLog(TracingEnvironment.class);
    }

    @Override
    public void postProcessEnvironment(ConfigurableEnvironment environment, SpringApplication application) {
        Map<String, Object> defaults = new HashMap<>();
        String endpoint = environment.getProperty(ENDPOINT);
        if (blank(endpoint)) {
            String boot3 = environment.getProperty(BOOT3_ENDPOINT);
            if (!blank(boot3)) {
                endpoint = boot3.trim();
                defaults.put(ENDPOINT, endpoint);
            }
        }
        if (blank(endpoint) && environment.getProperty(MAP_VARIABLES, Boolean.class, true)) {
            // Boot maps these itself; whether it already has depends on which post-processor ran first.
            String traces = environment.getProperty("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT");
            endpoint = blank(traces) ? environment.getProperty("OTEL_EXPORTER_OTLP_ENDPOINT") : traces;
        }
        TracingDefaults.add(
                defaults, environment, application.getClassLoader(), log, endpoint, EXPORT, AOT_TRACING_BEANS);
        // Added last: anything the application sets wins.
        environment.getPropertySources().addLast(new MapPropertySource("grpcops-tracing", defaults));
    }

    private static boolean blank(String value) {
        return value == null || value.isBlank();
    }
}
