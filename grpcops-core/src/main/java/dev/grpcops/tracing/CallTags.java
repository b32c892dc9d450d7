package dev.grpcops.tracing;

import dev.grpcops.tracing.internal.ServedSpan;

/**
 * Attributes for the span of the call being served, from any thread that runs in its gRPC
 * {@link io.grpc.Context} (a handler's callbacks, a downstream call's answer). Without tracing, when
 * the call's trace is not sampled, or without OpenTelemetry on the class path, a look-up that
 * writes nothing.
 *
 * <pre>{@code
 * served.run(() -> CallTags.tag("grpcops.lines.unavailable", "{UNAVAILABLE=1}"));
 * }</pre>
 */
public final class CallTags {

    /** Without the OpenTelemetry API there is no span to find, and its classes must not be touched. */
    private static final boolean AVAILABLE = present("io.opentelemetry.api.trace.Span");

    private CallTags() {}

    /** Adds {@code key = value} to the span of the call served in the current context, if it is recorded. */
    public static void tag(String key, String value) {
        if (AVAILABLE) {
            ServedSpan.tag(key, value);
        }
    }

    /** Whether the call served in the current context is traced and its span recorded. */
    public static boolean traced() {
        return AVAILABLE && ServedSpan.recordingNow();
    }

    private static boolean present(String className) {
        try {
            Class.forName(className, false, CallTags.class.getClassLoader());
            return true;
        } catch (ClassNotFoundException | LinkageError absent) {
            return false;
        }
    }
}
