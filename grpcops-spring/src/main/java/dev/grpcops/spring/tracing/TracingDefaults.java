package dev.grpcops.spring.tracing;

import java.util.Map;
import org.apache.commons.logging.Log;
import org.jspecify.annotations.Nullable;
import org.springframework.aot.AotDetector;
import org.springframework.core.env.ConfigurableEnvironment;
import org.springframework.util.ClassUtils;

/**
 * The defaults each starter's environment post-processor adds for tracing, whichever Spring Boot
 * names its properties: the export switch on exactly while there is an endpoint, baggage off, the
 * correlation pattern while tracing, and a warning when Spring AOT's beans were made without it.
 */
public final class TracingDefaults {

    static final String BAGGAGE = "management.tracing.baggage.enabled";
    static final String ZIPKIN_ENDPOINT = "management.zipkin.tracing.endpoint";
    static final String EXEMPLARS_ON_ALL_TYPES =
            "management.prometheus.metrics.export.properties.io.prometheus.exporter.exemplarsOnAllMetricTypes";
    static final String CORRELATION_PATTERN = "logging.pattern.correlation";

    private TracingDefaults() {}

    /**
     * Adds to {@code defaults} (a property source added last, so the application's own settings win):
     * {@code exportSwitch} as whether {@code endpoint} (OTLP) or Boot's {@code
     * management.zipkin.tracing.endpoint} is set (the switch is Boot's for every exporter), baggage off, and, while the
     * application has not switched export off itself, {@code %grpcopsCorrelation} as Boot's
     * correlation pattern (with Logback and OpenTelemetry present) and Prometheus exemplars only on
     * buckets and counters. Under Spring AOT, warns when
     * {@code aotTracingBeans}, what AOT generates for the starter's tracing configuration, is absent.
     */
    public static void add(
            Map<String, Object> defaults,
            ConfigurableEnvironment environment,
            ClassLoader classLoader,
            Log log,
            @Nullable String endpoint,
            String exportSwitch,
            String aotTracingBeans) {
        if (endpoint == null || endpoint.isBlank()) {
            endpoint = environment.getProperty(ZIPKIN_ENDPOINT);
        }
        boolean exporting = endpoint != null && !endpoint.isBlank();
        defaults.put(exportSwitch, Boolean.toString(exporting));
        // Boot's baggage layer reads and writes baggage on every call, sampled or not, for fields
        // nobody configured: 2 % of a hop's CPU measured. On when the application asks for it.
        defaults.put(BAGGAGE, "false");
        // What the application set itself, before this source's default is added.
        boolean tracing = exporting && environment.getProperty(exportSwitch, Boolean.class, true);
        if (tracing) {
            // Micrometer puts exemplars on every series, _count included, while a span is current;
            // Prometheus 2.42 (Debian 12's) fails the whole scrape on an exemplar there
            // ("…_count does not support exemplars"). Buckets and counters keep theirs.
            defaults.put(EXEMPLARS_ON_ALL_TYPES, "false");
        }
        if (tracing
                && ClassUtils.isPresent("ch.qos.logback.classic.PatternLayout", classLoader)
                && ClassUtils.isPresent("io.opentelemetry.api.trace.SpanContext", classLoader)
                && TraceCorrelationConverter.register()) {
            defaults.put(CORRELATION_PATTERN, "%" + TraceCorrelationConverter.WORD);
        }
        if (tracing && AotDetector.useGeneratedArtifacts() && !ClassUtils.isPresent(aotTracingBeans, classLoader)) {
            log.warn("Traces are to go to " + endpoint.trim() + ", but this process runs the beans Spring AOT"
                    + " made at build time without tracing (spring.aot.enabled=true): no span is made or"
                    + " exported. Start without -Dspring.aot.enabled=true, or build with the endpoint set.");
        }
    }
}
