package dev.grpcops.tracing.internal;

import io.grpc.Context;
import io.grpc.Status;
import io.opentelemetry.api.common.AttributeKey;
import io.opentelemetry.api.trace.Span;
import io.opentelemetry.api.trace.StatusCode;
import java.util.EnumSet;
import java.util.Set;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * The span of the call being served, in the call's gRPC {@link Context}, where every thread that
 * works for the call finds it: a call admitted from a queue starts on another thread, a hedge on the
 * timer thread. Ended once, when the call closes or is cancelled.
 */
public final class ServedSpan {

    public static final Context.Key<ServedSpan> KEY = Context.key("grpcops-served-span");

    static final AttributeKey<Long> STATUS_CODE = AttributeKey.longKey("rpc.grpc.status_code");

    /** The codes that make a served call's span an error (OpenTelemetry's semantic conventions for gRPC servers). */
    private static final Set<Status.Code> SERVER_ERRORS = EnumSet.of(
            Status.Code.UNKNOWN,
            Status.Code.DEADLINE_EXCEEDED,
            Status.Code.UNIMPLEMENTED,
            Status.Code.INTERNAL,
            Status.Code.UNAVAILABLE,
            Status.Code.DATA_LOSS);

    private final Span span;
    private final long arrivedNanos;
    private final AtomicBoolean ended = new AtomicBoolean();

    ServedSpan(Span span, long arrivedNanos) {
        this.span = span;
        this.arrivedNanos = arrivedNanos;
    }

    /** The served call's span in the current gRPC context, or null. */
    public static ServedSpan current() {
        return KEY.get();
    }

    /** Adds {@code key = value} to the span of the call served in the current context, if it is recorded. */
    public static void tag(String key, String value) {
        ServedSpan served = KEY.get();
        if (served != null && served.recording()) {
            served.span.setAttribute(key, value);
        }
    }

    /** Whether the call served in the current context has a recorded span. */
    public static boolean recordingNow() {
        ServedSpan served = KEY.get();
        return served != null && served.recording();
    }

    public Span span() {
        return span;
    }

    /** Whether the span is recorded (sampled): attributes written to it are kept. */
    public boolean recording() {
        return span.isRecording();
    }

    /** When the call arrived ({@link System#nanoTime()}); 0 when the span is not recorded. */
    public long arrivedNanos() {
        return arrivedNanos;
    }

    void end(Status status) {
        if (!ended.compareAndSet(false, true)) {
            return;
        }
        span.setAttribute(STATUS_CODE, (long) status.getCode().value());
        if (SERVER_ERRORS.contains(status.getCode())) {
            markError(span, status);
        }
        span.end();
    }

    /** The span is an error, described by the call's status code and description. */
    static void markError(Span span, Status status) {
        span.setStatus(
                StatusCode.ERROR,
                status.getDescription() == null
                        ? status.getCode().name()
                        : status.getCode() + ": " + status.getDescription());
    }
}
