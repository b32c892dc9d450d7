package dev.grpcops.retry.internal;

import dev.grpcops.internal.PickHint;
import io.grpc.Context;

/**
 * One attempt of a call made through {@code Retry}, in the gRPC {@link Context} while the attempt
 * is started. {@link AttemptInterceptor} reads it to send {@code grpc-previous-rpc-attempts} on an
 * extra attempt, and tells it which target (the channel's authority) the attempt went to.
 */
public final class Attempt {

    private static final Context.Key<Attempt> KEY = Context.key("grpcops-attempt");

    private final int previousAttempts;
    private final PickHint hint;
    private volatile String target;

    /** @param hint what the balancer learns and is told about this attempt's replica */
    public Attempt(int previousAttempts, PickHint hint) {
        this.previousAttempts = previousAttempts;
        this.hint = hint;
    }

    public PickHint hint() {
        return hint;
    }

    /** The attempt being started on this thread's context, or null outside {@code Retry}. */
    public static Attempt current() {
        return KEY.get();
    }

    /** 0 for the first attempt, 1 for a retry or hedge: the value of {@code grpc-previous-rpc-attempts} when positive. */
    public int previousAttempts() {
        return previousAttempts;
    }

    /** The target the attempt was sent to, or {@code null} when no attempt interceptor saw it. */
    public String target() {
        return target;
    }

    void sentTo(String target) {
        this.target = target;
    }

    /** {@code context} carrying this attempt. */
    public Context attachTo(Context context) {
        return context.withValue(KEY, this);
    }
}
