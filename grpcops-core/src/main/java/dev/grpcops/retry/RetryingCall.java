package dev.grpcops.retry;

import com.google.common.util.concurrent.AbstractFuture;
import com.google.common.util.concurrent.Futures;
import com.google.common.util.concurrent.ListenableFuture;
import dev.grpcops.budget.Budget;
import dev.grpcops.internal.PickHint;
import io.grpc.Context;
import io.grpc.Status;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Future;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;

/**
 * The outcome of a call made through {@link Retry#call}: the first attempt's, or the retry's. One
 * listener on the first attempt does the accounting and the deciding (this runs once per downstream
 * call, so no future per step). Cancelling it cancels the attempt in progress.
 */
final class RetryingCall<T> extends AbstractFuture<T> implements Runnable {

    private final Attempts attempts;
    private final ListenableFuture<T> first;
    private final Budget budget;
    private final String target;
    private final Context context;
    private final Supplier<ListenableFuture<T>> call;
    private final PickHint firstHint;
    private volatile Future<?> delayed;
    private volatile ListenableFuture<T> second;

    RetryingCall(
            Attempts attempts,
            ListenableFuture<T> first,
            Budget budget,
            String target,
            Context context,
            Supplier<ListenableFuture<T>> call,
            PickHint firstHint) {
        this.attempts = attempts;
        this.first = first;
        this.budget = budget;
        this.target = target;
        this.context = context;
        this.call = call;
        this.firstHint = firstHint;
    }

    /**
     * The first attempt is done. Whatever goes wrong while deciding (a listener that throws, a retry
     * that cannot start) fails this future: no caller is ever left waiting.
     */
    @Override
    public void run() {
        if (isDone()) {
            return; // cancelled meanwhile
        }
        if (first.isCancelled()) {
            cancel(false);
            return;
        }
        try {
            T answer;
            try {
                answer = Futures.getDone(first);
            } catch (ExecutionException e) {
                failed(e.getCause());
                return;
            }
            attempts.limiter.onSuccess(target);
            set(answer);
        } catch (Throwable e) {
            setException(e);
        }
    }

    private void failed(Throwable failure) {
        long delayMs = attempts.retryDelay(failure, budget, target);
        if (delayMs < 0) {
            setException(failure);
        } else if (delayMs == 0) {
            retry(failure, false);
        } else {
            try {
                delayed = attempts.scheduler.schedule(() -> retry(failure, true), delayMs, TimeUnit.MILLISECONDS);
            } catch (RejectedExecutionException shutDown) {
                setException(failure);
                return;
            }
            if (isCancelled()) {
                delayed.cancel(false); // cancelled while scheduling: afterDone did not see the task
            }
        }
    }

    /** The rules, checked again now; the retry's outcome becomes this future's. */
    private void retry(Throwable failure, boolean pushedBack) {
        if (isDone()) {
            return; // cancelled while the pushback delay ran
        }
        if (context.isCancelled()) {
            // The caller left while the pushback delay ran: no retry is sent, no token spent.
            setException(Status.CANCELLED
                    .withDescription("the caller left before the retry")
                    .withCause(context.cancellationCause())
                    .asRuntimeException());
            return;
        }
        try {
            if (attempts.admit(budget, target, pushedBack)) {
                second = attempts.startRetry(context, call, target, firstHint);
                setFuture(second);
            } else {
                setException(failure);
            }
        } catch (Throwable e) {
            setException(e);
        }
    }

    @Override
    protected void afterDone() {
        if (isCancelled()) {
            // With true: a gRPC call's future stops its call downstream only when told it may interrupt.
            first.cancel(true);
            ListenableFuture<T> retried = second;
            if (retried != null) {
                retried.cancel(true);
            }
            Future<?> waiting = delayed;
            if (waiting != null) {
                waiting.cancel(false);
            }
        }
    }
}
