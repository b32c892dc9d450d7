package dev.grpcops.retry;

import com.google.common.util.concurrent.ListenableFuture;
import com.google.common.util.concurrent.MoreExecutors;
import dev.grpcops.budget.Budget;
import dev.grpcops.budget.BudgetRules;
import dev.grpcops.internal.PickHint;
import dev.grpcops.internal.SharedScheduler;
import dev.grpcops.internal.WarmUpMark;
import dev.grpcops.retry.internal.Attempt;
import dev.grpcops.retry.internal.AttemptInterceptor;
import io.grpc.ClientInterceptor;
import io.grpc.Context;
import java.util.Objects;
import java.util.concurrent.ScheduledExecutorService;
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
 * when called outside a served call. Each path is its own type: {@link #call} a {@link
 * RetryingCall}, {@link #hedged} (which adds hedging) a {@link HedgedCall}, {@link #blocking} a
 * {@link BlockingCall}; this class holds what they share. The futures returned are Guava's own
 * ({@link com.google.common.util.concurrent.SettableFuture}): a callback gets a failure as it is,
 * not wrapped in a new {@code ExecutionException} with a stack trace taken for it. A call made
 * while the process warms itself up ({@link dev.grpcops.warmup.WarmUp}) gets one attempt, neither
 * retried nor hedged nor counted by the limiter or the hedge delays, whatever else is switched off:
 * a downstream not up yet while a server warms up must not spend the tokens its callers' retries
 * need. Channels the calls go through need {@link #clientInterceptor()}, which names the target of
 * each attempt and sends {@code grpc-previous-rpc-attempts: 1} on the retry.
 *
 * <pre>{@code
 * Retry retry = Retry.builder(BudgetRules.DEFAULTS).limiter(RetryLimiter.defaults(metrics)).listener(metrics).build();
 * ManagedChannel pricing = ManagedChannelBuilder.forTarget(...).intercept(Retry.clientInterceptor(), ...).build();
 * ListenableFuture<QuoteReply> quote = retry.call(() -> PricingGrpc.newFutureStub(pricing).quote(request));
 * }</pre>
 */
public final class Retry {

    private final Attempts attempts;
    /** Null: {@link #hedged} only retries. */
    private final Hedges hedges;

    private Retry(Builder builder) {
        RetryLimiter limiter = builder.limiter != null ? builder.limiter : RetryLimiter.defaults(builder.listener);
        this.attempts = new Attempts(builder.rules, limiter, builder.listener, builder.scheduler, builder.nanoClock);
        this.hedges =
                builder.hedging == null ? null : new Hedges(builder.hedging, builder.nanoClock, attempts.listener);
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
        return attempts.limiter;
    }

    /** Starts {@code call}, and starts it once more if it fails with UNAVAILABLE and every rule allows. */
    public <T> ListenableFuture<T> call(Supplier<ListenableFuture<T>> call) {
        Budget current = Budget.currentOrNull();
        Budget budget = current != null ? current : Budget.fresh(attempts.rules);
        // Inside a served call the budget is in the current context already: no new one per call.
        Context context = current != null ? Context.current() : budget.attachTo(Context.current());
        if (WarmUpMark.active()) {
            return Attempts.start(context, call);
        }
        Attempt first = new Attempt(0, PickHint.first());
        ListenableFuture<T> firstResult = Attempts.start(first.attachTo(context), call);
        String target = first.target();
        attempts.limiter.onCall(target);
        RetryingCall<T> retrying =
                new RetryingCall<>(attempts, firstResult, budget, target, context, call, first.hint());
        firstResult.addListener(retrying, MoreExecutors.directExecutor());
        return retrying.result;
    }

    /**
     * For idempotent calls (reads): as {@link #call}, and besides, when the first attempt has had no
     * answer after the target's hedge delay, a second attempt goes to another replica; the first
     * definitive answer wins and the other attempt is cancelled ({@link HedgedCall}). A hedge is sent
     * only when the {@link Hedging} rules, the limiter and the deadline budget (reserve +
     * min-downstream) allow, and never under a call that arrived as another hop's retry or hedge.
     * Without hedging configured, the same as {@link #call}.
     */
    public <T> ListenableFuture<T> hedged(Supplier<ListenableFuture<T>> call) {
        if (hedges == null) {
            return call(call);
        }
        return hedge(call, true);
    }

    /**
     * As {@link #hedged}, but a failure is never retried: for a hop that passes its downstream's
     * errors on and leaves retries to its caller (only one hop retries).
     */
    public <T> ListenableFuture<T> hedgeOnly(Supplier<ListenableFuture<T>> call) {
        if (hedges == null) {
            Budget current = Budget.currentOrNull();
            Budget budget = current != null ? current : Budget.fresh(attempts.rules);
            return Attempts.start(current != null ? Context.current() : budget.attachTo(Context.current()), call);
        }
        return hedge(call, false);
    }

    private <T> ListenableFuture<T> hedge(Supplier<ListenableFuture<T>> call, boolean retries) {
        Budget current = Budget.currentOrNull();
        Budget budget = current != null ? current : Budget.fresh(attempts.rules);
        Context context = current != null ? Context.current() : budget.attachTo(Context.current());
        if (WarmUpMark.active()) {
            return Attempts.start(context, call);
        }
        HedgedCall<T> hedged = new HedgedCall<>(attempts, hedges, budget, context, call, retries);
        hedged.start();
        return hedged.result;
    }

    /**
     * The blocking form of {@link #call}: for code that uses blocking stubs. A pushback delay is
     * waited on the calling thread, which the blocking caller has given up anyway.
     */
    public <T> T blocking(Supplier<T> call) {
        return BlockingCall.run(attempts, call);
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

        /** Told what became of each call that failed with UNAVAILABLE, and of each hedge; nothing by default. */
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
