package dev.grpcops.spring.tracing;

import ch.qos.logback.classic.PatternLayout;
import ch.qos.logback.classic.pattern.ClassicConverter;
import ch.qos.logback.classic.spi.ILoggingEvent;
import dev.grpcops.tracing.GrpcTracing;
import io.opentelemetry.api.trace.SpanContext;
import java.util.Map;

/**
 * {@code %grpcopsCorrelation} in a Logback pattern: {@code [traceId-spanId] } of the gRPC call being
 * served on the logging thread, read from its gRPC context when the line is written (so a call
 * costs nothing until it logs); where Micrometer put ids in the MDC (an HTTP request), those; blanks
 * of the same width otherwise, as Spring Boot's {@code %correlationId} writes them.
 */
public final class TraceCorrelationConverter extends ClassicConverter {

    /** The pattern word, {@value}. */
    public static final String WORD = "grpcopsCorrelation";

    private static final String NONE = "[" + " ".repeat(32) + "-" + " ".repeat(16) + "] ";

    /** Makes {@code %grpcopsCorrelation} known to every Logback pattern; true when it is. */
    public static boolean register() {
        PatternLayout.DEFAULT_CONVERTER_SUPPLIER_MAP.putIfAbsent(WORD, TraceCorrelationConverter::new);
        return true;
    }

    @Override
    public String convert(ILoggingEvent event) {
        Map<String, String> mdc = event.getMDCPropertyMap();
        String traceId = mdc == null ? null : mdc.get("traceId");
        if (traceId != null && !traceId.isEmpty()) {
            return "[" + traceId + "-" + mdc.getOrDefault("spanId", "") + "] ";
        }
        SpanContext served = GrpcTracing.currentSpanContext();
        if (served != null && served.isValid()) {
            return "[" + served.getTraceId() + "-" + served.getSpanId() + "] ";
        }
        return NONE;
    }
}
