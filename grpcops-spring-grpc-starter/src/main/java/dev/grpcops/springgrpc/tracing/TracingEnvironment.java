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
import org.springframework.core.env.EnumerablePropertySource;
import org.springframework.core.env.MapPropertySource;
import org.springframework.core.env.PropertySource;

/**
 * Tracing is on exactly while there is somewhere to send traces: Spring Boot 4's {@code
 * management.opentelemetry.tracing.export.otlp.endpoint}, Boot 3's {@code management.otlp.tracing.endpoint}
 * (Boot 3's {@code management.otlp.tracing.*}, its headers and transport too, are taken as Boot 4's
 * {@code management.opentelemetry.tracing.export.otlp.*}, which Boot 4 alone reads), or the
 * OpenTelemetry SDK's environment variables {@code OTEL_EXPORTER_OTLP_TRACES_ENDPOINT} and {@code
 * OTEL_EXPORTER_OTLP_ENDPOINT} (which Boot 4 maps itself, with {@code OTEL_EXPORTER_OTLP_PROTOCOL},
 * {@code OTEL_TRACES_SAMPLER_ARG} and the rest, from the process's environment only).
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
    static final String BOOT3_PREFIX = "management.otlp.tracing.";
    static final String BOOT4_PREFIX = "management.opentelemetry.tracing.export.otlp.";
    static final String EXPORT = "management.tracing.export.enabled";
    static final String MAP_VARIABLES = "management.opentelemetry.map-environment-variables";

    private final Log log;

    public TracingEnvironment(DeferredLogFactory logs) {
        this.log = logs.getLog(TracingEnvironment.class);
    }

    @Override
    public void postProcessEnvironment(ConfigurableEnvironment environment, SpringApplication application) {
        Map<String, Object> defaults = new HashMap<>();
        takeBoot3Names(environment, defaults);
        String endpoint = environment.getProperty(ENDPOINT);
        if (blank(endpoint)) {
            // Also MANAGEMENT_OTLP_TRACING_ENDPOINT, which no property name lists.
            endpoint = environment.getProperty(BOOT3_PREFIX + "endpoint");
            if (!blank(endpoint)) {
                defaults.put(ENDPOINT, endpoint);
            }
        }
        if (blank(endpoint) && environment.getProperty(MAP_VARIABLES, Boolean.class, true)) {
            // Boot maps these itself, from the process's environment; whether it already has depends
            // on which post-processor ran first.
            Map<String, Object> variables = environment.getSystemEnvironment();
            Object traces = variables.get("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT");
            Object base = variables.get("OTEL_EXPORTER_OTLP_ENDPOINT");
            endpoint = traces != null && !blank(traces.toString())
                    ? traces.toString()
                    : base == null ? null : base.toString();
        }
        TracingDefaults.add(
                defaults, environment, application.getClassLoader(), log, endpoint, EXPORT, AOT_TRACING_BEANS);
        // Added last: anything the application sets wins.
        environment.getPropertySources().addLast(new MapPropertySource("grpcops-tracing", defaults));
    }

    /** Boot 3's {@code management.otlp.tracing.*} as Boot 4's, where the application set no Boot 4 name. */
    private static void takeBoot3Names(ConfigurableEnvironment environment, Map<String, Object> defaults) {
        for (PropertySource<?> source : environment.getPropertySources()) {
            if (!(source instanceof EnumerablePropertySource<?> enumerable)) {
                continue;
            }
            for (String name : enumerable.getPropertyNames()) {
                if (!name.startsWith(BOOT3_PREFIX) || name.startsWith(BOOT3_PREFIX + "export.")) {
                    continue;
                }
                String boot4 = BOOT4_PREFIX + name.substring(BOOT3_PREFIX.length());
                if (!environment.containsProperty(boot4) && !defaults.containsKey(boot4)) {
                    defaults.put(boot4, environment.getProperty(name));
                }
            }
        }
    }

    private static boolean blank(String value) {
        return value == null || value.isBlank();
    }
}
