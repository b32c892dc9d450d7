package dev.grpcops.retry;

import com.google.common.util.concurrent.Futures;
import com.google.common.util.concurrent.ListenableFuture;
import com.google.common.util.concurrent.MoreExecutors;
import com.google.common.util.concurrent.SettableFuture;
import com.google.errorprone.annotations.concurrent.GuardedBy;
import dev.grpcops.budget.Budget;
import dev.grpcops.client.CallOutcome;
import dev.grpcops.internal.PickHint;
import dev.grpcops.retry.internal.Attempt;
import io.grpc.Context;
import java.util.concurrent.CancellationException;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Future;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;

/**
 * A call made through {@link Retry#hedged}: the first attempt, and a hedge once the target's delay
 * has passed without an answer, until one of them decides the call (design §16):
 * <ul>
 *   <li>the first <em>definitive</em> answer wins: OK, or an application status ({@link
 *       CallOutcome#definitive}); the other attempt is cancelled;
 *   <li>a replica failure, shedding, or a local refusal (the budget) decides nothing while the other
 *       attempt may still answer; when both fail so, the first's failure is the call's;
 *   <li>a first attempt that fails before any hedge went out takes the retry path of
 *       {@link Retry#call} (when retries are on);
 *   <li>a hedge is scored won or lost only when it raced the first to an answer, and never when the
 *       caller cancelled;
 *   <li>every first answer is learned by the target's delay, and so is a first the hedge beat (its
 *       time so far: its latency was at least that), whether or not a hedge was held back.
 * </ul>
 */
final class HedgedCall<T> implements Runnable {

    /**
     * The call's outcome. A {@link SettableFuture}, not a future of this class's own: Guava hands a
     * settable future's failure to a callback as it is, where a future of any other class costs each
     * reader a new {@code ExecutionException} and its stack trace, which under overload, when calls
     * fail by the thousand a second, cost more than the rest of the failed call.
     */
    final SettableFuture<T> result = SettableFuture.create();

    private final Attempts attempts;
    private final Hedges hedges;
    private final Budget budget;
    private final Context context;
    private final Supplier<ListenableFuture<T>> call;
    private final boolean retries;
    private final PickHint firstHint = PickHint.first();
    private String target;
    /** The name the target's hedges are reported under. */
    private String name;

    private ListenableFuture<T> first;
    private long firstStart;

    @GuardedBy("this")
    private ListenableFuture<T> hedge;

    @GuardedBy("this")
    private long hedgeStart;

    @GuardedBy("this")
    private Future<?> timer;

    /** The first attempt failed without deciding, while the hedge may still answer. */
    @GuardedBy("this")
    private Throwable firstFailure;

    /** The hedge failed without deciding, while the first may still answer. */
    @GuardedBy("this")
    private Throwable hedgeFailure;

    HedgedCall(
            Attempts attempts,
            Hedges hedges,
            Budget budget,
            Context context,
            Supplier<ListenableFuture<T>> call,
            boolean retries) {
        this.attempts = attempts;
        this.hedges = hedges;
        this.budget = budget;
        this.context = context;
        this.call = call;
        this.retries = retries;
    }

    void start() {
        result.addListener(this, MoreExecutors.directExecutor());
        Attempt attempt = new Attempt(0, firstHint);
        firstStart = attempts.nanoClock.getAsLong();
        ListenableFuture<T> started = Attempts.start(attempt.attachTo(context), call);
        target = attempt.target();
        name = hedges.latencies.key(target);
        attempts.limiter.onCall(target);
        hedges.budget.onCall(target);
        attempts.listener.hedgeable(name);
        long delay = hedges.delayNanos(target, budget);
        synchronized (this) {
            first = started;
            if (delay >= 0 && !started.isDone()) {
                try {
                    timer = attempts.scheduler.schedule(this::hedge, delay, TimeUnit.NANOSECONDS);
                } catch (RejectedExecutionException shutDown) {
                    timer = null; // no hedge, the first attempt stands alone
                }
            }
        }
        started.addListener(this::firstDone, MoreExecutors.directExecutor());
    }

    /** The hedge delay is over and the first has not answered: a second attempt, if every rule allows. */
    private void hedge() {
        ListenableFuture<T> sent;
        synchronized (this) {
            if (result.isDone() || hedge != null || first.isDone() || context.isCancelled()) {
                return; // decided, or the caller has left: nothing more is sent for it
            }
            if (!budget.allowsCall()) {
                attempts.listener.hedge(name, HedgeOutcome.REFUSED);
                return;
            }
            if (!hedges.wins.get(target).mayHedge() || !hedges.budget.tryAcquire(target)) {
                attempts.listener.hedge(name, HedgeOutcome.THROTTLED);
                return;
            }
            if (!attempts.limiter.tryAcquire(target)) {
                hedges.budget.release(target);
                attempts.listener.hedge(name, HedgeOutcome.THROTTLED);
                return;
            }
            attempts.listener.hedge(name, HedgeOutcome.SENT);
            hedgeStart = attempts.nanoClock.getAsLong();
            hedge = Attempts.start(new Attempt(1, PickHint.avoiding(firstHint)).attachTo(context), call);
            sent = hedge;
        }
        sent.addListener(this::hedgeDone, MoreExecutors.directExecutor());
    }

    private void firstDone() {
        if (result.isDone()) {
            return; // cancelled, or the hedge decided
        }
        try {
            T answer;
            try {
                answer = Futures.getDone(first);
            } catch (ExecutionException e) {
                firstFailed(e.getCause());
                return;
            } catch (CancellationException e) {
                result.cancel(false);
                return;
            }
            learn(attempts.nanoClock.getAsLong() - firstStart);
            attempts.limiter.onSuccess(target);
            decide(answer, null, false);
        } catch (Throwable e) {
            result.setException(e);
        }
    }

    private void firstFailed(Throwable failure) {
        if (CallOutcome.of(failure).definitive()) {
            // The replica answered, with an application status: the call is decided.
            learn(attempts.nanoClock.getAsLong() - firstStart);
            attempts.account(failure, target);
            decide(null, failure, false);
            return;
        }
        boolean hedgeSent;
        boolean hedgeFailedToo;
        synchronized (this) {
            hedgeSent = hedge != null;
            if (!hedgeSent) {
                cancelTimer();
            }
            hedgeFailedToo = hedgeSent && hedgeFailure != null;
            if (hedgeSent && !hedgeFailedToo) {
                firstFailure = failure; // the hedge may still answer
            }
        }
        if (!hedgeSent && retries) {
            // As call(): the retry path, which accounts for this failure itself.
            RetryingCall<T> retrying = new RetryingCall<>(
                    attempts, Futures.immediateFailedFuture(failure), budget, target, context, call, firstHint);
            retrying.firstFailed(failure);
            result.setFuture(retrying.result);
            return;
        }
        attempts.account(failure, target);
        if (!hedgeSent || hedgeFailedToo) {
            decide(null, failure, false);
        }
    }

    private void hedgeDone() {
        ListenableFuture<T> attempt;
        long started;
        synchronized (this) {
            attempt = hedge;
            started = hedgeStart;
        }
        if (attempt.isCancelled() || result.isDone()) {
            return; // the first decided, or the caller cancelled
        }
        try {
            T answer;
            try {
                answer = Futures.getDone(attempt);
            } catch (ExecutionException e) {
                hedgeFailed(e.getCause());
                return;
            }
            hedges.latencies.get(target).record(attempts.nanoClock.getAsLong() - started);
            attempts.limiter.onSuccess(target);
            decide(answer, null, true);
        } catch (Throwable e) {
            result.setException(e);
        }
    }

    private void hedgeFailed(Throwable failure) {
        attempts.account(failure, target);
        if (CallOutcome.of(failure).definitive()) {
            decide(null, failure, true);
            return;
        }
        Throwable firstFailedToo;
        synchronized (this) {
            firstFailedToo = firstFailure;
            if (firstFailedToo == null) {
                hedgeFailure = failure; // the first may still answer
            }
        }
        if (firstFailedToo != null) {
            decide(null, firstFailedToo, false);
        }
    }

    /**
     * Ends the call with {@code answer} (or {@code failure}) from the first attempt or the hedge; the
     * other attempt, if running, is cancelled once the result is done ({@link #run}).
     */
    private void decide(T answer, Throwable failure, boolean byHedge) {
        boolean hedgeSent;
        boolean otherRunning;
        synchronized (this) {
            hedgeSent = hedge != null;
            ListenableFuture<T> other = byHedge ? first : hedge;
            otherRunning = other != null && !other.isDone();
        }
        boolean decided = failure == null ? result.set(answer) : result.setException(failure);
        if (!decided || !hedgeSent) {
            return;
        }
        if (byHedge && otherRunning) {
            // The first, cancelled now, took at least this long: its latency is not forgotten.
            learn(attempts.nanoClock.getAsLong() - firstStart);
        }
        if (otherRunning && !context.isCancelled()) {
            HedgeWins wins = hedges.wins.get(target);
            if (byHedge) {
                wins.won();
            } else {
                wins.lost();
            }
            attempts.listener.hedge(name, byHedge ? HedgeOutcome.WON : HedgeOutcome.LOST);
        }
    }

    /** The target's delay learns what the first attempt took. */
    private void learn(long nanos) {
        hedges.latencies.get(target).record(nanos);
    }

    @GuardedBy("this")
    private void cancelTimer() {
        if (timer != null) {
            timer.cancel(false);
            timer = null;
        }
    }

    /** The result is done (decided, or cancelled by the caller): the timer and any attempt still running stop. */
    @Override
    public void run() {
        ListenableFuture<T> firstAttempt;
        ListenableFuture<T> hedgeAttempt;
        synchronized (this) {
            cancelTimer();
            firstAttempt = first;
            hedgeAttempt = hedge;
        }
        // With true: a gRPC call's future stops its call downstream only when told it may interrupt.
        if (firstAttempt != null && !firstAttempt.isDone()) {
            firstAttempt.cancel(true);
        }
        if (hedgeAttempt != null && !hedgeAttempt.isDone()) {
            hedgeAttempt.cancel(true);
        }
    }
}
