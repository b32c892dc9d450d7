package dev.grpcops.retry;

import com.google.common.util.concurrent.Futures;
import com.google.common.util.concurrent.ListenableFuture;
import com.google.common.util.concurrent.MoreExecutors;
import dev.grpcops.budget.Budget;
import dev.grpcops.budget.BudgetRules;
import dev.grpcops.internal.Headers;
import dev.grpcops.internal.PickHint;
import dev.grpcops.internal.RateLimitedLog;
import dev.grpcops.retry.internal.Attempt;
import io.grpc.Context;
import io.grpc.Metadata;
import io.grpc.Status;
import java.time.Duration;
import java.util.Objects;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.function.DoubleSupplier;
import java.util.function.LongSupplier;
import java.util.function.Supplier;
import org.slf4j.LoggerFactory;

/**
 * What every path of {@link Retry} shares: the rules a retry must pass, the limiter that pays for
 * extra attempts, the listener (whose failures never reach a call), and how an attempt is started.
 */
final class Attempts {

    /** Parsed pushback that means "do not retry". */
    static final long NO_RETRY = -1;
    /** No pushback trailer. */
    static final long ABSENT = -2;

    final BudgetRules rules;
    final RetryLimiter limiter;
    final RetryListener listener;
    final ScheduledExecutorService scheduler;
    final LongSupplier nanoClock;

    Attempts(
            BudgetRules rules,
            RetryLimiter limiter,
            RetryListener listener,
            ScheduledExecutorService scheduler,
            LongSupplier nanoClock) {
        this.rules = rules;
        this.limiter = limiter;
        this.listener = new SafeListener(listener);
        this.scheduler = scheduler;
        this.nanoClock = nanoClock;
    }

    /**
     * Accounts for a failed first attempt and decides whether a retry may be considered: -1 for no
     * (the outcome already reported when it was a retry candidate), else the delay in ms before the
     * rules are checked once more in {@link #admit}.
     */
    long retryDelay(Throwable failure, Budget budget, String target) {
        long pushback = account(failure, target);
        if (Status.fromThrowable(failure).getCode() != Status.Code.UNAVAILABLE) {
            return -1; // RESOURCE_EXHAUSTED included: what fair admission answers is never retried
        }
        if (budget.arrivedAsRetry()) {
            return -1; // an upstream hop is retrying this call already: one hop retries
        }
        if (pushback == NO_RETRY) {
            listener.outcome(Targets.name(target), RetryOutcome.PUSHBACK);
            return -1;
        }
        if (pushback > 0 && !rules.allowsRetry(budget.remainingNanos() - TimeUnit.MILLISECONDS.toNanos(pushback))) {
            listener.outcome(Targets.name(target), RetryOutcome.PUSHBACK); // the wait alone would spend the budget
            return -1;
        }
        return pushback == ABSENT ? 0 : pushback;
    }

    /** The rules, recomputed now: the deadline floor, then the limiter. */
    boolean admit(Budget budget, String target, boolean pushedBack) {
        if (!budget.allowsRetry()) {
            listener.outcome(Targets.name(target), pushedBack ? RetryOutcome.PUSHBACK : RetryOutcome.REFUSED);
            return false;
        }
        if (!limiter.tryAcquire(target)) {
            listener.outcome(Targets.name(target), RetryOutcome.THROTTLED);
            return false;
        }
        listener.outcome(Targets.name(target), RetryOutcome.ATTEMPTED);
        return true;
    }

    /** A6: UNAVAILABLE, or any answer carrying pushback, costs a token. Returns the parsed pushback. */
    long account(Throwable failure, String target) {
        long pushback = pushbackOf(failure);
        if (Status.fromThrowable(failure).getCode() == Status.Code.UNAVAILABLE || pushback != ABSENT) {
            limiter.onFailure(target);
        }
        return pushback;
    }

    /** Starts the retry, and feeds its result to the limiter when it completes. */
    <T> ListenableFuture<T> startRetry(
            Context context, Supplier<ListenableFuture<T>> call, String target, PickHint firstHint) {
        // Elsewhere than the first attempt went, if the balancer can tell.
        ListenableFuture<T> started = start(new Attempt(1, PickHint.avoiding(firstHint)).attachTo(context), call);
        started.addListener(
                () -> {
                    try {
                        Futures.getDone(started);
                        limiter.onSuccess(target);
                    } catch (ExecutionException e) {
                        account(e.getCause(), target);
                    } catch (RuntimeException | Error e) {
                        account(e, target);
                    }
                },
                MoreExecutors.directExecutor());
        return started;
    }

    /** Runs {@code call} in {@code context}; a call that throws or returns no future fails the attempt instead. */
    static <T> ListenableFuture<T> start(Context context, Supplier<ListenableFuture<T>> call) {
        try {
            return Objects.requireNonNull(runIn(context, call), "the call returned no future");
        } catch (RuntimeException e) {
            return Futures.immediateFailedFuture(e);
        }
    }

    static <T> T runIn(Context context, Supplier<T> call) {
        Context previous = context.attach();
        try {
            return call.get();
        } finally {
            context.detach(previous);
        }
    }

    static long pushbackOf(Throwable failure) {
        Metadata trailers = Status.trailersFromThrowable(failure);
        String value = trailers == null ? null : trailers.get(Headers.RETRY_PUSHBACK);
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

    /** A listener whose failures are logged (at most once in ten seconds), never thrown into a call. */
    private static final class SafeListener implements RetryListener {

        private static final RateLimitedLog failures =
                new RateLimitedLog(LoggerFactory.getLogger(Retry.class), Duration.ofSeconds(10));

        private final RetryListener delegate;

        SafeListener(RetryListener delegate) {
            this.delegate = delegate;
        }

        private static void failed(RuntimeException e) {
            failures.warn("retry: the retry listener failed (the call goes on): " + e);
        }

        @Override
        public void outcome(String target, RetryOutcome outcome) {
            try {
                delegate.outcome(target, outcome);
            } catch (RuntimeException e) {
                failed(e);
            }
        }

        @Override
        public void tokens(String target, DoubleSupplier tokens) {
            try {
                delegate.tokens(target, tokens);
            } catch (RuntimeException e) {
                failed(e);
            }
        }

        @Override
        public void hedgeDelay(String target, DoubleSupplier seconds) {
            try {
                delegate.hedgeDelay(target, seconds);
            } catch (RuntimeException e) {
                failed(e);
            }
        }

        @Override
        public void hedgeable(String target) {
            try {
                delegate.hedgeable(target);
            } catch (RuntimeException e) {
                failed(e);
            }
        }

        @Override
        public void hedge(String target, HedgeOutcome outcome) {
            try {
                delegate.hedge(target, outcome);
            } catch (RuntimeException e) {
                failed(e);
            }
        }
    }
}
