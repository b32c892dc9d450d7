package dev.grpcops.autoconfigure.tracing;

import io.grpc.Context;
import io.micrometer.observation.Observation;

/**
 * Attributes for the span of the call being served, from any thread that runs in its gRPC
 * {@link Context} (a handler's callbacks, a downstream call's answer): the served call's
 * observation travels in the context while traces are exported. Without tracing, a look-up that
 * finds nothing.
 *
 * <pre>{@code
 * served.run(() -> CallTags.tag("grpcops.lines.unavailable", "UNAVAILABLE:1"));
 * }</pre>
 */
public final class CallTags {

    static final Context.Key<Observation> SERVED = Context.key("grpcops-served-observation");

    private CallTags() {}

    /** Adds {@code key = value} to the span of the call served in the current context, if it is traced. */
    public static void tag(String key, String value) {
        Observation observation = SERVED.get();
        if (observation != null && !observation.isNoop()) {
            observation.highCardinalityKeyValue(key, value);
        }
    }

    /** Whether the call served in the current context is traced. */
    public static boolean traced() {
        Observation observation = SERVED.get();
        return observation != null && !observation.isNoop();
    }

    static Observation served() {
        return SERVED.get();
    }
}
