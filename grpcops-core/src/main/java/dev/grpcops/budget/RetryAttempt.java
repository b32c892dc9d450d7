package dev.grpcops.budget;

import io.grpc.Context;
import java.util.Optional;

/**
 * One attempt of a call made through {@link BudgetRetry}, in the gRPC {@link Context} while the
 * attempt is started. The budget's client interceptor reads it to send
 * {@code grpc-previous-rpc-attempts} on a retry, and tells it which target (the channel's
 * authority) the attempt went to, so that {@link RetryGovernor} can account for that target.
 */
public final class RetryAttempt {

    private static final Context.Key<RetryAttempt> KEY = Context.key("grpcops-retry-attempt");

    private final int previousAttempts;
    private volatile String target;

    RetryAttempt(int previousAttempts) {
        this.previousAttempts = previousAttempts;
    }

    /** The attempt being started on this thread's context, if it is made through {@link BudgetRetry}. */
    public static Optional<RetryAttempt> current() {
        return Optional.ofNullable(KEY.get());
    }

    /** 0 for the first attempt, 1 for the retry: the value of {@code grpc-previous-rpc-attempts} when positive. */
    public int previousAttempts() {
        return previousAttempts;
    }

    /** Records the target (the channel's authority) the attempt is sent to. */
    public void sentTo(String target) {
        this.target = target;
    }

    /** The target the attempt was sent to, or {@code null} when no budget client interceptor saw it. */
    String target() {
        return target;
    }

    Context attachTo(Context context) {
        return context.withValue(KEY, this);
    }
}
