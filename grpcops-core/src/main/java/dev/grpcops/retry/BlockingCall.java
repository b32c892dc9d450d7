package dev.grpcops.retry;

import dev.grpcops.budget.Budget;
import dev.grpcops.internal.PickHint;
import dev.grpcops.internal.WarmUpMark;
import dev.grpcops.retry.internal.Attempt;
import io.grpc.Context;
import io.grpc.StatusRuntimeException;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;

/**
 * A call made through {@link Retry#blocking}: the first attempt on the calling thread and, when it
 * fails with {@code UNAVAILABLE} and the budget and the limiter allow, one retry to another replica.
 * A pushback delay is waited on the calling thread, which the blocking caller has given up anyway.
 */
final class BlockingCall {

    private BlockingCall() {}

    static <T> T run(Attempts attempts, Supplier<T> call) {
        Budget budget = Budget.current().orElseGet(() -> Budget.fresh(attempts.rules));
        Context context = budget.attachTo(Context.current());
        if (WarmUpMark.active()) {
            return Attempts.runIn(context, call);
        }
        Attempt first = new Attempt(0, PickHint.first());
        try {
            T answer = Attempts.runIn(first.attachTo(context), call);
            attempts.limiter.onCall(first.target());
            attempts.limiter.onSuccess(first.target());
            return answer;
        } catch (StatusRuntimeException failure) {
            String target = first.target();
            attempts.limiter.onCall(target);
            long delayMs = attempts.retryDelay(failure, budget, target);
            if (delayMs < 0) {
                throw failure;
            }
            if (delayMs > 0) {
                try {
                    TimeUnit.MILLISECONDS.sleep(delayMs);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    throw failure;
                }
            }
            if (!attempts.admit(budget, target, delayMs > 0)) {
                throw failure;
            }
            try {
                T answer = Attempts.runIn(new Attempt(1, PickHint.avoiding(first.hint())).attachTo(context), call);
                attempts.limiter.onSuccess(target);
                return answer;
            } catch (StatusRuntimeException retryFailure) {
                attempts.account(retryFailure, target);
                throw retryFailure;
            }
        }
    }
}
