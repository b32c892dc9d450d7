package dev.grpcops.retry;

import com.google.common.util.concurrent.AbstractFuture;
import com.google.common.util.concurrent.Futures;
import com.google.common.util.concurrent.ListenableFuture;
import com.google.common.util.concurrent.MoreExecutors;
import com.google.errorprone.annotations.concurrent.GuardedBy;
import dev.grpcops.deadline.Budget;
import dev.grpcops.deadline.BudgetRules;
import dev.grpcops.internal.Headers;
import dev.grpcops.internal.PickHint;
import dev.grpcops.internal.SharedScheduler;
import dev.grpcops.retry.internal.Attempt;
import dev.grpcops.retry.internal.AttemptInterceptor;
import io.grpc.ClientInterceptor;
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
import java.util.concurrent.TimeUnit;
import java.util.function.LongSupplier;
import java.util.function.Supplier;

/**
 * Retries a downstream call once, on {@code UNAVAILABLE} only, when every rule allows it, each
 * checked at the moment the retry would start:
 * <ol>
 *   <li>the call being served did not itself arrive as a retry ({@code grpc-previous-rpc-attempts}):
 *       only one hop retries;
 *   <li>the server did not push back: {@code grpc-retry-pushback-ms} negative or unparsable means
 *       no retry, a positive value means retry only after that delay (scheduled, no thread waits);
 *   <li>the deadline budget, recomputed then, still allows it (remaining − reserve ≥ retry-min);
 *   <li>the {@link RetryLimiter} allows one more attempt to the target.
 * </ol>
 * Any other failure ({@code RESOURCE_EXHAUSTED} included), or a retry a rule refuses, is returned
 * as it is. Both attempts run under the same budget: the current one, or a fresh default budget
 * when called outside a served call. Under a warm-up call ({@link Budget#warmUp()}) a call gets one
 * attempt, neither retried nor hedged nor counted by the limiter or the hedge delays: a downstream
 * not up yet while a server warms up must not spend the tokens its callers' retries need. Channels
 * the calls go through need {@link #clientInterceptor()}, which names the target of each attempt
 * and sends {@code grpc-previous-rpc-attempts: 1} on the retry.
 *
 * <pre>{@code
 * Retry retry = Retry.builder(BudgetRules.DEFAULTS).limiter(RetryLimiter.defaults(metrics)).listener(metrics).build();
 * ManagedChannel pricing = ManagedChannelBuilder.forTarget(...).intercept(Retry.clientInterceptor(), ...).build();
 * ListenableFuture<QuoteReply> quote = retry.call(() -> PricingGrpc.newFutureStub(pricing).quote(request));
 * }</pre>
 */
public final class Retry {

    /** Parsed pushback that means "do not retry". */
    private static final long NO_RETRY = -1;
    /** No pushback trailer. */
    private static final long ABSENT = -2;

    private final BudgetRules rules;
    private final RetryLimiter limiter;
    private final RetryListener listener;
    private final ScheduledExecutorService scheduler;
    private final LongSupplier nanoClock;
    /** Null: {@link #hedged} only retries. */
    private final Hedging hedging;

    private final Targets<LatencyWindow> latencies;
    private final Targets<HedgeWins> hedgeWins;
    /** The hedges' own share of each target's calls (Finagle's maxExtraLoad). */
    private final RetryBudget hedgeBudget;

    private Retry(Builder builder) {
        this.rules = builder.rules;
        this.listener = builder.listener;
        this.limiter = builder.limiter != null ? builder.limiter : RetryLimiter.defaults(builder.listener);
        this.scheduler = builder.scheduler;
        this.nanoClock = builder.nanoClock;
        this.hedging = builder.hedging;
        this.latencies = hedging == null
                ? null
                : new Targets<>(
                        target -> new LatencyWindow(hedging.percentile(), builder.nanoClock),
                        (target, window) -> listener.hedgeDelay(target, () -> {
                            long delay = hedgeDelayNanos(window);
                            return delay < 0 ? Double.NaN : delay / 1e9;
                        }));
        this.hedgeWins = hedging == null
                ? null
                : new Targets<>(target -> new HedgeWins(builder.nanoClock), (target, wins) -> {});
        this.hedgeBudget = hedging == null
                ? null
                : RetryBudget.builder()
                        .percent(hedging.maxExtraPercent())
                        .nanoClock(builder.nanoClock)
                        .build();
    }

    /** A builder with these budget rules (the deadline floor: retry-min). */
    public static Builder builder(BudgetRules rules) {
        return new Builder(rules);
    }

    /**
     * The interceptor every channel called through a {@code Retry} needs: it names each attempt's
     * target for the limiter and marks extra attempts with {@code grpc-previous-rpc-attempts}.
     */
    public static ClientInterceptor clientInterceptor() {
        return new AttemptInterceptor();
    }

    public RetryLimiter limiter() {
        return limiter;
    }

    /** Starts {@code call}, and starts it once more if it fails with UNAVAILABLE and every rule allows. */
    public <T> ListenableFuture<T> call(Supplier<ListenableFuture<T>> call) {
        Budget current = Budget.current().orElse(null);
        Budget budget = current != null ? current : Budget.fresh(rules);
        // Inside a served call the budget is in the current context already: no new one per call.
        Context context = current != null ? Context.current() : budget.attachTo(Context.current());
        if (budget.warmUp()) {
            return start(context, call);
        }
        Attempt first = new Attempt(0, PickHint.first());
        ListenableFuture<T> firstResult = start(first.attachTo(context), call);
        String target = first.target();
        limiter.onCall(target);
        Retrying<T> result = new Retrying<>(firstResult, budget, target, context, call, first.hint());
        firstResult.addListener(result, MoreExecutors.directExecutor());
        return result;
    }

    /**
     * For idempotent calls (reads): as {@link #call}, and besides, when the first attempt has had no
     * answer after the target's hedge delay, a second attempt goes to another replica; the first
     * answer wins and the other attempt is cancelled. A hedge is sent only when the {@link Hedging}
     * rules, the limiter and the deadline budget (reserve + min-downstream) allow, and never under a
     * call that arrived as another hop's retry or hedge. Without hedging configured, the same as {@link #call}.
     */
    public <T> ListenableFuture<T> hedged(Supplier<ListenableFuture<T>> call) {
        if (hedging == null) {
            return call(call);
        }
        return hedge(call, true);
    }

    /**
     * As {@link #hedged}, but a failure is never retried: for a hop that passes its downstream's
     * errors on and leaves retries to its caller (only one hop retries).
     */
    public <T> ListenableFuture<T> hedgeOnly(Supplier<ListenableFuture<T>> call) {
        return hedge(call, false);
    }

    private <T> ListenableFuture<T> hedge(Supplier<ListenableFuture<T>> call, boolean retries) {
        Budget current = Budget.current().orElse(null);
        Budget budget = current != null ? current : Budget.fresh(rules);
        Context context = current != null ? Context.current() : budget.attachTo(Context.current());
        if (budget.warmUp()) {
            return start(context, call);
        }
        Hedged<T> result = new Hedged<>(budget, context, call, retries);
        result.start();
        return result;
    }

    /** The delay after which a call to {@code target} is hedged, or -1 when it is not to be. */
    private long hedgeDelayNanos(String target, Budget budget) {
        if (hedging == null || budget.arrivedAsRetry()) {
            return -1; // another hop is retrying or hedging this call already: one hop does
        }
        return hedgeDelayNanos(latencies.get(target));
    }

    /** The hedge delay {@code window} gives now, or -1 before it knows enough. */
    private long hedgeDelayNanos(LatencyWindow window) {
        long percentile = window.count() < hedging.minSamples() ? -1 : window.percentileNanos();
        if (percentile < 0) {
            return -1; // nothing learned yet: no guess
        }
        return Math.max(
                hedging.minDelay().toNanos(), Math.min(hedging.maxDelay().toNanos(), percentile));
    }

    /**
     * A hedged call: the first attempt, and the hedge once its timer fires, until one of them
     * answers. A failure of the first before any hedge went out takes the retry path of {@link #call}.
     */
    private final class Hedged<T> extends AbstractFuture<T> {

        private final Budget budget;
        private final Context context;
        private final Supplier<ListenableFuture<T>> call;
        private final boolean retries;
        private final PickHint firstHint = PickHint.first();
        private String target;
        private ListenableFuture<T> first;
        private long firstStart;

        @GuardedBy("this")
        private ListenableFuture<T> hedge;

        @GuardedBy("this")
        private long hedgeStart;

        @GuardedBy("this")
        private Future<?> timer;

        @GuardedBy("this")
        private Throwable firstFailure;

        /**
         * The hedge was due and not sent (throttled or refused): the first's latency is not learned.
         * Written under this object's lock, read without it when the first answers.
         */
        private volatile boolean hedgeDenied;

        Hedged(Budget budget, Context context, Supplier<ListenableFuture<T>> call, boolean retries) {
            this.budget = budget;
            this.context = context;
            this.call = call;
            this.retries = retries;
        }

        void start() {
            Attempt attempt = new Attempt(0, firstHint);
            firstStart = nanoClock.getAsLong();
            ListenableFuture<T> started = Retry.start(attempt.attachTo(context), call);
            target = attempt.target();
            limiter.onCall(target);
            if (hedgeBudget != null) {
                hedgeBudget.onCall(target);
                listener.hedgeable(target);
            }
            long delay = hedgeDelayNanos(target, budget);
            synchronized (this) {
                first = started;
                if (delay >= 0 && !started.isDone()) {
                    try {
                        timer = scheduler.schedule(this::hedge, delay, TimeUnit.NANOSECONDS);
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
                if (isDone() || hedge != null || first.isDone()) {
                    return;
                }
                if (!budget.allowsCall()) {
                    denied(HedgeOutcome.REFUSED);
                    return;
                }
                if (!hedgeWins.get(target).mayHedge() || !hedgeBudget.tryAcquire(target)) {
                    denied(HedgeOutcome.THROTTLED);
                    return;
                }
                if (!limiter.tryAcquire(target)) {
                    hedgeBudget.release(target);
                    denied(HedgeOutcome.THROTTLED);
                    return;
                }
                listener.hedge(target, HedgeOutcome.SENT);
                hedgeStart = nanoClock.getAsLong();
                hedge = Retry.start(new Attempt(1, PickHint.avoiding(firstHint)).attachTo(context), call);
                sent = hedge;
            }
            sent.addListener(this::hedgeDone, MoreExecutors.directExecutor());
        }

        private void firstDone() {
            if (isDone()) {
                return; // cancelled, or the hedge won
            }
            try {
                T answer;
                try {
                    answer = Futures.getDone(first);
                } catch (ExecutionException e) {
                    firstFailed(e.getCause());
                    return;
                } catch (java.util.concurrent.CancellationException e) {
                    cancel(false);
                    return;
                }
                if (latencies != null && (!hedgeDenied || hedgeWins.get(target).losing())) {
                    latencies.get(target).record(nanoClock.getAsLong() - firstStart);
                }
                limiter.onSuccess(target);
                answered(answer, false);
            } catch (Throwable e) {
                setException(e);
            }
        }

        /**
         * The hedge was due and could not be sent: counted, and the first's latency is not learned
         * while the target's hedges win. Such an answer is then what hedging exists to cut (a slow
         * replica's): learned, a few of them raise the percentile above every healthy answer, hedges
         * stop, more of them are learned, and the delay stays up as long as the slow replica takes
         * calls. When hedges lose, the whole target is slow, and its answers are learned so that the
         * delay follows them ({@link HedgeWins}).
         */
        @GuardedBy("this")
        private void denied(HedgeOutcome outcome) {
            hedgeDenied = true;
            listener.hedge(target, outcome);
        }

        private void firstFailed(Throwable failure) {
            boolean hedgeSent;
            synchronized (this) {
                hedgeSent = hedge != null;
                if (!hedgeSent) {
                    cancelTimer();
                } else if (!hedge.isDone() && nonFatal(failure)) {
                    firstFailure = failure; // the hedge may still answer
                }
            }
            if (!hedgeSent && retries) {
                // As call(): the retry path, which accounts for this failure itself.
                setFuture(retryAfter(Futures.immediateFailedFuture(failure), budget, target, context, call, firstHint));
                return;
            }
            account(failure, target);
            synchronized (this) {
                if (firstFailure == failure) {
                    return;
                }
            }
            decided(failure, false);
        }

        private void hedgeDone() {
            ListenableFuture<T> attempt;
            long started;
            synchronized (this) {
                attempt = hedge;
                started = hedgeStart;
            }
            if (attempt.isCancelled()) {
                return; // the first answered: counted then
            }
            try {
                T answer;
                try {
                    answer = Futures.getDone(attempt);
                } catch (ExecutionException e) {
                    Throwable failure = e.getCause();
                    account(failure, target);
                    boolean firstFailedToo;
                    synchronized (this) {
                        firstFailedToo = firstFailure != null || first.isDone();
                    }
                    if (firstFailedToo || !nonFatal(failure)) {
                        decided(failure, false);
                    }
                    return; // else the first may still answer
                }
                latencies.get(target).record(nanoClock.getAsLong() - started);
                limiter.onSuccess(target);
                answered(answer, true);
            } catch (Throwable e) {
                setException(e);
            }
        }

        /** The answer that wins; the other attempt, if any, is cancelled. */
        private void answered(T answer, boolean byHedge) {
            if (set(answer)) {
                outcome(byHedge);
            }
        }

        private void decided(Throwable failure, boolean byHedge) {
            if (setException(failure)) {
                outcome(byHedge);
            }
        }

        private void outcome(boolean byHedge) {
            boolean hedgeSent;
            synchronized (this) {
                hedgeSent = hedge != null;
            }
            if (hedgeSent) {
                HedgeWins wins = hedgeWins.get(target);
                if (byHedge) {
                    wins.won();
                } else {
                    wins.lost();
                }
                listener.hedge(target, byHedge ? HedgeOutcome.WON : HedgeOutcome.LOST);
            }
        }

        @GuardedBy("this")
        private void cancelTimer() {
            if (timer != null) {
                timer.cancel(false);
                timer = null;
            }
        }

        @Override
        protected void afterDone() {
            ListenableFuture<T> firstAttempt;
            ListenableFuture<T> hedgeAttempt;
            synchronized (this) {
                cancelTimer();
                firstAttempt = first;
                hedgeAttempt = hedge;
            }
            boolean interrupt = wasInterrupted();
            if (firstAttempt != null && !firstAttempt.isDone()) {
                firstAttempt.cancel(interrupt);
            }
            if (hedgeAttempt != null && !hedgeAttempt.isDone()) {
                hedgeAttempt.cancel(interrupt);
            }
        }
    }

    /** A failure another attempt may still make good: the replica was down or busy, not the request wrong. */
    private static boolean nonFatal(Throwable failure) {
        Status.Code code = Status.fromThrowable(failure).getCode();
        return code == Status.Code.UNAVAILABLE || code == Status.Code.RESOURCE_EXHAUSTED;
    }

    /** The retry path of {@link #call} for a first attempt that is done (or will be). */
    private <T> ListenableFuture<T> retryAfter(
            ListenableFuture<T> firstResult,
            Budget budget,
            String target,
            Context context,
            Supplier<ListenableFuture<T>> call,
            PickHint firstHint) {
        Retrying<T> result = new Retrying<>(firstResult, budget, target, context, call, firstHint);
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
        private final String target;
        private final Context context;
        private final Supplier<ListenableFuture<T>> call;
        private final PickHint firstHint;
        private volatile Future<?> delayed;

        Retrying(
                ListenableFuture<T> first,
                Budget budget,
                String target,
                Context context,
                Supplier<ListenableFuture<T>> call,
                PickHint firstHint) {
            this.first = first;
            this.budget = budget;
            this.target = target;
            this.context = context;
            this.call = call;
            this.firstHint = firstHint;
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
                limiter.onSuccess(target);
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
                    setFuture(startRetry(context, call, target, firstHint));
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
        if (budget.warmUp()) {
            return runIn(context, call);
        }
        Attempt first = new Attempt(0, PickHint.first());
        try {
            T answer = runIn(first.attachTo(context), call);
            limiter.onCall(first.target());
            limiter.onSuccess(first.target());
            return answer;
        } catch (StatusRuntimeException failure) {
            String target = first.target();
            limiter.onCall(target);
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
            try {
                T answer = runIn(new Attempt(1, PickHint.avoiding(first.hint())).attachTo(context), call);
                limiter.onSuccess(target);
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
    private long retryDelay(Throwable failure, Budget budget, String target) {
        long pushback = account(failure, target);
        if (Status.fromThrowable(failure).getCode() != Status.Code.UNAVAILABLE) {
            return -1; // RESOURCE_EXHAUSTED included: what fair admission answers is never retried
        }
        if (budget.arrivedAsRetry()) {
            return -1; // an upstream hop is retrying this call already: one hop retries
        }
        if (pushback == NO_RETRY) {
            listener.outcome(targetName(target), RetryOutcome.PUSHBACK);
            return -1;
        }
        if (pushback > 0 && !rules.allowsRetry(budget.remaining().minusMillis(pushback))) {
            listener.outcome(targetName(target), RetryOutcome.PUSHBACK); // the wait alone would spend the budget
            return -1;
        }
        return pushback == ABSENT ? 0 : pushback;
    }

    /** The rules, recomputed now: the deadline floor, then the limiter. */
    private boolean admit(Budget budget, String target, boolean pushedBack) {
        if (!budget.allowsRetry()) {
            listener.outcome(targetName(target), pushedBack ? RetryOutcome.PUSHBACK : RetryOutcome.REFUSED);
            return false;
        }
        if (!limiter.tryAcquire(target)) {
            listener.outcome(targetName(target), RetryOutcome.THROTTLED);
            return false;
        }
        listener.outcome(targetName(target), RetryOutcome.ATTEMPTED);
        return true;
    }

    /** Starts the retry, and feeds its result to the limiter when it completes. */
    private <T> ListenableFuture<T> startRetry(
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
    private static <T> ListenableFuture<T> start(Context context, Supplier<ListenableFuture<T>> call) {
        try {
            return Objects.requireNonNull(runIn(context, call), "the call returned no future");
        } catch (RuntimeException e) {
            return Futures.immediateFailedFuture(e);
        }
    }

    /** A6: UNAVAILABLE, or any answer carrying pushback, costs a token. Returns the parsed pushback. */
    private long account(Throwable failure, String target) {
        long pushback = pushbackOf(failure);
        if (Status.fromThrowable(failure).getCode() == Status.Code.UNAVAILABLE || pushback != ABSENT) {
            limiter.onFailure(target);
        }
        return pushback;
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

    private static String targetName(String target) {
        return target == null ? Targets.UNKNOWN : target;
    }

    private static <T> T runIn(Context context, Supplier<T> call) {
        Context previous = context.attach();
        try {
            return call.get();
        } finally {
            context.detach(previous);
        }
    }

    /** How a {@link Retry} decides; only the budget rules are required. */
    public static final class Builder {

        private final BudgetRules rules;
        private RetryLimiter limiter;
        private RetryListener listener = RetryListener.NONE;
        private ScheduledExecutorService scheduler = SharedScheduler.coarse();
        private LongSupplier nanoClock = System::nanoTime;
        private Hedging hedging;

        private Builder(BudgetRules rules) {
            this.rules = Objects.requireNonNull(rules, "rules");
        }

        /** Who allows extra attempts per target; by default {@link RetryLimiter#defaults} with this builder's listener. */
        public Builder limiter(RetryLimiter limiter) {
            this.limiter = Objects.requireNonNull(limiter, "limiter");
            return this;
        }

        /** Told what became of each call that failed with UNAVAILABLE; nothing by default. */
        public Builder listener(RetryListener listener) {
            this.listener = Objects.requireNonNull(listener, "listener");
            return this;
        }

        /**
         * Starts a pushed-back retry or a hedge when its delay is over; the task only starts the call,
         * it never waits for it. By default the library's shared hedge timer, which runs a task up to
         * a millisecond late and wakes at most once a millisecond however many calls are hedged.
         */
        public Builder scheduler(ScheduledExecutorService scheduler) {
            this.scheduler = Objects.requireNonNull(scheduler, "scheduler");
            return this;
        }

        /** Hedges {@link #hedged} calls by these rules; none by default (hedged calls are then only retried). */
        public Builder hedging(Hedging hedging) {
            this.hedging = hedging;
            return this;
        }

        /** A monotonic clock in nanoseconds, for hedge delays and latencies (tests give a fake one). */
        public Builder nanoClock(LongSupplier nanoClock) {
            this.nanoClock = Objects.requireNonNull(nanoClock, "nanoClock");
            return this;
        }

        public Retry build() {
            return new Retry(this);
        }
    }
}
