package dev.grpcops.retry;

import com.google.common.util.concurrent.Futures;
import com.google.common.util.concurrent.ListenableFuture;
import com.google.common.util.concurrent.MoreExecutors;
import com.google.common.util.concurrent.SettableFuture;
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
 * A call made through {@link Retry#call}: its {@link #result} is the first attempt's outcome, or the
 * retry's. One listener on the first attempt does the accounting and the deciding (this runs once
 * per downstream call, so no future per step). Cancelling the result cancels the attempt in progress.
 */
final class RetryingCall<T> implements Runnable {

    /** The call's outcome: a {@link SettableFuture}, whose failure Guava reads without a new exception (see {@link HedgedCall#result}). */
    final SettableFuture<T> result = SettableFuture.create();

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
        result.addListener(this::resultDone, MoreExecutors.directExecutor());
    }

    /**
     * The first attempt is done. Whatever goes wrong while deciding (a listener that throws, a retry
     * that cannot start) fails this future: no caller is ever left waiting.
     */
    @Override
    public void run() {
        if (result.isDone()) {
            return; // cancelled meanwhile
        }
        if (first.isCancelled()) {
            result.cancel(false);
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
            result.set(answer);
        } catch (Throwable e) {
            result.setException(e);
        }
    }

    /** As {@link #run}, for a first attempt known to have failed with {@code failure}: it is not read again. */
    void firstFailed(Throwable failure) {
        try {
            failed(failure);
        } catch (Throwable e) {
            result.setException(e);
        }
    }

    private void failed(Throwable failure) {
        long delayMs = attempts.retryDelay(failure, budget, target);
        if (delayMs < 0) {
            result.setException(failure);
        } else if (delayMs == 0) {
            retry(failure, false);
        } else {
            try {
                delayed = attempts.scheduler.schedule(() -> retry(failure, true), delayMs, TimeUnit.MILLISECONDS);
            } catch (RejectedExecutionException shutDown) {
                result.setException(failure);
                return;
            }
            if (result.isCancelled()) {
                delayed.cancel(false); // cancelled while scheduling: resultDone did not see the task
            }
        }
    }

    /** The rules, checked again now; the retry's outcome becomes the result's. */
    private void retry(Throwable failure, boolean pushedBack) {
        if (result.isDone()) {
            return; // cancelled while the pushback delay ran
        }
        if (context.isCancelled()) {
            // The caller left while the pushback delay ran: no retry is sent, no token spent.
            result.setException(Status.CANCELLED
                    .withDescription("the caller left before the retry")
                    .withCause(context.cancellationCause())
                    .asRuntimeException());
            return;
        }
        try {
            if (attempts.admit(budget, target, pushedBack)) {
                second = attempts.startRetry(context, call, target, firstHint);
                result.setFuture(second);
            } else {
                result.setException(failure);
            }
        } catch (Throwable e) {
            result.setException(e);
        }
    }

    /** The result is done: when the caller cancelled it, the attempt in progress and a waiting retry stop. */
    private void resultDone() {
        if (result.isCancelled()) {
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
