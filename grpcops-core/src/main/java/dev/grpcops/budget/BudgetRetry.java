package dev.grpcops.budget;

import com.google.common.util.concurrent.Futures;
import com.google.common.util.concurrent.ListenableFuture;
import com.google.common.util.concurrent.MoreExecutors;
import io.grpc.Context;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import java.util.function.Supplier;

/**
 * Retries a downstream call once, on {@code UNAVAILABLE} only, and only if the budget recomputed
 * at that moment still allows it (remaining − reserve ≥ retry-min). Any other failure, or a retry
 * the budget cannot pay for, is returned as it is. Both attempts run under the same budget: the
 * current one, or a fresh default budget when called outside a served call.
 *
 * <pre>{@code
 * ListenableFuture<QuoteReply> quote = retry.call(() -> pricing.quote(request));
 * }</pre>
 */
public final class BudgetRetry {

    private final BudgetRules rules;
    private final BudgetListener listener;

    public BudgetRetry(BudgetRules rules, BudgetListener listener) {
        this.rules = rules;
        this.listener = listener;
    }

    /** Starts {@code call}, and starts it once more if it fails with UNAVAILABLE and the budget allows. */
    public <T> ListenableFuture<T> call(Supplier<ListenableFuture<T>> call) {
        Budget budget = Budget.current().orElseGet(() -> Budget.fresh(rules));
        Context context = budget.attachTo(Context.current());
        ListenableFuture<T> first = runIn(context, call);
        return Futures.catchingAsync(first, Throwable.class, failure -> {
            if (!mayRetry(failure, budget)) {
                return Futures.immediateFailedFuture(failure);
            }
            return runIn(context, call);
        }, MoreExecutors.directExecutor());
    }

    /** The blocking form of {@link #call}: for code that uses blocking stubs. */
    public <T> T blocking(Supplier<T> call) {
        Budget budget = Budget.current().orElseGet(() -> Budget.fresh(rules));
        Context context = budget.attachTo(Context.current());
        try {
            return runIn(context, call);
        } catch (StatusRuntimeException failure) {
            if (!mayRetry(failure, budget)) {
                throw failure;
            }
            return runIn(context, call);
        }
    }

    private boolean mayRetry(Throwable failure, Budget budget) {
        if (Status.fromThrowable(failure).getCode() != Status.Code.UNAVAILABLE) {
            return false;
        }
        boolean allowed = budget.allowsRetry();
        listener.retry(allowed);
        return allowed;
    }

    private static <T> T runIn(Context context, Supplier<T> call) {
        Context previous = context.attach();
        try {
            return call.get();
        } finally {
            context.detach(previous);
        }
    }
}
