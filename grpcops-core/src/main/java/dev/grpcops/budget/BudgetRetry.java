package dev.grpcops.budget;

import com.google.common.util.concurrent.AbstractFuture;
import com.google.common.util.concurrent.Futures;
import com.google.common.util.concurrent.ListenableFuture;
import com.google.common.util.concurrent.MoreExecutors;
import io.grpc.Context;
import io.grpc.Metadata;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import java.time.Duration;
import java.util.Objects;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Future;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;

/**
 * Retries a downstream call once, on {@code UNAVAILABLE} only, when every rule allows it (SPEC §4
 * and §11), each checked at the moment the retry would start:
 * <ol>
 *   <li>the call being served did not itself arrive as a retry ({@code grpc-previous-rpc-attempts}):
 *       only one hop retries;
 *   <li>the server did not push back: {@code grpc-retry-pushback-ms} negative or unparsable means
 *       no retry, a positive value means retry only after that delay (scheduled, no thread waits);
 *   <li>the deadline budget, recomputed then, still allows it (remaining − reserve ≥ retry-min);
 *   <li>the target's token bucket is above half and its retry budget has room ({@link RetryGovernor}).
 * </ol>
 * Any other failure ({@code RESOURCE_EXHAUSTED} included), or a retry a rule refuses, is returned
 * as it is. Both attempts run under the same budget: the current one, or a fresh default budget
 * when called outside a served call. The retry carries {@code grpc-previous-rpc-attempts: 1}
 * (sent by the budget's client interceptor, which also names the target: the channel's authority).
 *
 * <pre>{@code
 * ListenableFuture<QuoteReply> quote = retry.call(() -> pricing.quote(request));
 * }</pre>
 */
public final class BudgetRetry {

    /** Sent on a retry attempt (gRFC A6); a call that arrives with it is not retried further down. */
    public static final Metadata.Key<String> PREVIOUS_ATTEMPTS =
            Metadata.Key.of("grpc-previous-rpc-attempts", Metadata.ASCII_STRING_MARSHALLER);
    /** A server's answer to "may I retry": negative or unparsable means no, n ≥ 0 means after n ms (gRFC A6). */
    public static final Metadata.Key<String> PUSHBACK =
            Metadata.Key.of("grpc-retry-pushback-ms", Metadata.ASCII_STRING_MARSHALLER);

    /** Parsed pushback that means "do not retry". */
    private static final long NO_RETRY = -1;
    /** No pushback trailer. */
    private static final long ABSENT = -2;

    private final BudgetRules rules;
    private final RetryGovernor governor;
    private final BudgetListener listener;
    private final ScheduledExecutorService scheduler;

    /** The SPEC §11 defaults for the governor, the system clock, a shared scheduler for pushback delays. */
    public BudgetRetry(BudgetRules rules, BudgetListener listener) {
        this(rules, RetryThrottling.DEFAULTS, listener);
    }

    public BudgetRetry(BudgetRules rules, RetryThrottling throttling, BudgetListener listener) {
        this(rules, new RetryGovernor(throttling, System::nanoTime, listener), listener, SharedScheduler.INSTANCE);
    }

    /**
     * @param scheduler starts a pushed-back retry when its delay is over: the task only starts the
     *     call, it never waits for it, so one thread serves every delay
     */
    public BudgetRetry(BudgetRules rules, RetryGovernor governor, BudgetListener listener,
            ScheduledExecutorService scheduler) {
        this.rules = rules;
        this.governor = governor;
        this.listener = listener;
        this.scheduler = scheduler;
    }

    /** The one daemon thread that starts pushed-back retries of every BudgetRetry made without a scheduler. */
    public static ScheduledExecutorService sharedScheduler() {
        return SharedScheduler.INSTANCE;
    }

    public RetryGovernor governor() {
        return governor;
    }

    /** Starts {@code call}, and starts it once more if it fails with UNAVAILABLE and every rule allows. */
    public <T> ListenableFuture<T> call(Supplier<ListenableFuture<T>> call) {
        Budget current = Budget.current().orElse(null);
        Budget budget = current != null ? current : Budget.fresh(rules);
        // Inside a served call the budget is in the current context already: no new one per call.
        Context context = current != null ? Context.current() : budget.attachTo(Context.current());
        RetryAttempt first = new RetryAttempt(0);
        ListenableFuture<T> firstResult;
        try {
            firstResult = runIn(first.attachTo(context), call);
        } catch (RuntimeException e) {
            firstResult = Futures.immediateFailedFuture(e);
        }
        RetryGovernor.Target target = governor.target(first.target());
        target.called();
        Retrying<T> result = new Retrying<>(firstResult, budget, target, context, call);
        firstResult.addListener(result, MoreExecutors.directExecutor());
        return result;
    }

    /**
     * The outcome of a call made through {@link #call}: the first attempt's, or the retry's. One
     * listener on the first attempt does the accounting and the deciding (this runs once per
     * downstream call, so no future per step). Cancelling it cancels the attempt in progress.
     */
    private final class Retrying<T> extends AbstractFuture<T> implements Runnable {

        private final ListenableFuture<T> first;
        private final Budget budget;
        private final RetryGovernor.Target target;
        private final Context context;
        private final Supplier<ListenableFuture<T>> call;
        private volatile Future<?> delayed;

        Retrying(ListenableFuture<T> first, Budget budget, RetryGovernor.Target target, Context context,
                Supplier<ListenableFuture<T>> call) {
            this.first = first;
            this.budget = budget;
            this.target = target;
            this.context = context;
            this.call = call;
        }

        /**
         * The first attempt is done. Whatever goes wrong while deciding (a listener that throws, a
         * retry that cannot start) fails this future: no caller is ever left waiting.
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
                target.succeeded();
                set(answer);
            } catch (Throwable e) {
                setException(e);
            }
        }

        private void failed(Throwable failure) {
            long delayMs = retryDelay(failure, budget, target);
            if (delayMs < 0) {
                setException(failure);
            } else if (delayMs == 0) {
                retry(failure, false);
            } else {
                try {
                    delayed = scheduler.schedule(() -> retry(failure, true), delayMs, TimeUnit.MILLISECONDS);
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
            try {
                if (admit(budget, target, pushedBack)) {
                    setFuture(startRetry(context, call, target));
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
                first.cancel(wasInterrupted()); // the retry, if one started, is cancelled by setFuture
                Future<?> waiting = delayed;
                if (waiting != null) {
                    waiting.cancel(false);
                }
            }
        }
    }

    /**
     * The blocking form of {@link #call}: for code that uses blocking stubs. A pushback delay is
     * waited on the calling thread, which the blocking caller has given up anyway.
     */
    public <T> T blocking(Supplier<T> call) {
        Budget budget = Budget.current().orElseGet(() -> Budget.fresh(rules));
        Context context = budget.attachTo(Context.current());
        RetryAttempt first = new RetryAttempt(0);
        RetryGovernor.Target target = null;
        try {
            T answer = runIn(first.attachTo(context), call);
            target = governor.target(first.target());
            target.called();
            target.succeeded();
            return answer;
        } catch (StatusRuntimeException failure) {
            if (target == null) {
                target = governor.target(first.target());
                target.called();
            }
            long delayMs = retryDelay(failure, budget, target);
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
            if (!admit(budget, target, delayMs > 0)) {
                throw failure;
            }
            RetryAttempt retry = new RetryAttempt(1);
            try {
                T answer = runIn(retry.attachTo(context), call);
                target.succeeded();
                return answer;
            } catch (StatusRuntimeException retryFailure) {
                account(retryFailure, target);
                throw retryFailure;
            }
        }
    }

    /**
     * Accounts for the failed first attempt and decides whether a retry may be considered: -1 for
     * no (the outcome already reported when it was a retry candidate), else the delay in ms before
     * the rules are checked once more in {@link #admit}.
     */
    private long retryDelay(Throwable failure, Budget budget, RetryGovernor.Target target) {
        long pushback = account(failure, target);
        if (Status.fromThrowable(failure).getCode() != Status.Code.UNAVAILABLE) {
            return -1; // RESOURCE_EXHAUSTED included: what fair admission answers is never retried
        }
        if (budget.arrivedAsRetry()) {
            return -1; // an upstream hop is retrying this call already: one hop retries
        }
        if (pushback == NO_RETRY) {
            listener.retryOutcome(target.name(), RetryOutcome.PUSHBACK);
            return -1;
        }
        if (pushback > 0 && !rules.allowsRetry(budget.remaining().minusMillis(pushback))) {
            listener.retryOutcome(target.name(), RetryOutcome.PUSHBACK); // the wait alone would spend the budget
            return -1;
        }
        return pushback == ABSENT ? 0 : pushback;
    }

    /** The rules, recomputed now: the deadline floor, then the target's bucket and retry budget. */
    private boolean admit(Budget budget, RetryGovernor.Target target, boolean pushedBack) {
        if (!budget.allowsRetry()) {
            listener.retryOutcome(target.name(), pushedBack ? RetryOutcome.PUSHBACK : RetryOutcome.REFUSED);
            return false;
        }
        if (!target.tryAcquireRetry()) {
            listener.retryOutcome(target.name(), RetryOutcome.THROTTLED);
            return false;
        }
        listener.retryOutcome(target.name(), RetryOutcome.ATTEMPTED);
        return true;
    }

    /** Starts the retry, and feeds its result to the target's token bucket when it completes. */
    private <T> ListenableFuture<T> startRetry(Context context, Supplier<ListenableFuture<T>> call,
            RetryGovernor.Target target) {
        ListenableFuture<T> result;
        try {
            result = Objects.requireNonNull(runIn(new RetryAttempt(1).attachTo(context), call),
                    "the call returned no future");
        } catch (RuntimeException e) {
            result = Futures.immediateFailedFuture(e);
        }
        ListenableFuture<T> started = result;
        started.addListener(() -> {
            try {
                Futures.getDone(started);
                target.succeeded();
            } catch (ExecutionException e) {
                account(e.getCause(), target);
            } catch (RuntimeException | Error e) {
                account(e, target);
            }
        }, MoreExecutors.directExecutor());
        return started;
    }

    /** A6: UNAVAILABLE, or any answer carrying pushback, costs a token. Returns the parsed pushback. */
    private static long account(Throwable failure, RetryGovernor.Target target) {
        long pushback = pushbackOf(failure);
        if (Status.fromThrowable(failure).getCode() == Status.Code.UNAVAILABLE || pushback != ABSENT) {
            target.failed();
        }
        return pushback;
    }

    static long pushbackOf(Throwable failure) {
        Metadata trailers = Status.trailersFromThrowable(failure);
        String value = trailers == null ? null : trailers.get(PUSHBACK);
        if (value == null) {
            return ABSENT;
        }
        try {
            long ms = Long.parseLong(value.trim());
            return ms < 0 ? NO_RETRY : Math.min(ms, Duration.ofDays(1).toMillis());
        } catch (NumberFormatException e) {
            return NO_RETRY;
        }
    }

    private static <T> T runIn(Context context, Supplier<T> call) {
        Context previous = context.attach();
        try {
            return call.get();
        } finally {
            context.detach(previous);
        }
    }

    /** One daemon thread for every pushback delay of every BudgetRetry made without a scheduler. */
    private static final class SharedScheduler {
        static final ScheduledExecutorService INSTANCE = make();

        private static ScheduledExecutorService make() {
            ScheduledThreadPoolExecutor executor = new ScheduledThreadPoolExecutor(1, runnable -> {
                Thread thread = new Thread(runnable, "grpcops-retry-pushback");
                thread.setDaemon(true);
                return thread;
            });
            executor.setRemoveOnCancelPolicy(true);
            return executor;
        }
    }
}
