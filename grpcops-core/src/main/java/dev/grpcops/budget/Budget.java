package dev.grpcops.budget;

import io.grpc.Context;
import io.grpc.Deadline;
import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import org.jspecify.annotations.Nullable;

/**
 * The deadline budget of the call being served: the caller's deadline, or the default when the
 * caller sent none. It travels in the gRPC {@link Context}, so code running while the call is
 * served (and downstream calls made from there) sees it through {@link #current()}.
 *
 * <pre>{@code
 * Budget budget = Budget.current().orElseThrow();
 * if (!budget.allowsCall()) { ... answer from cache ... }
 * }</pre>
 */
public final class Budget {

    private static final Context.Key<Budget> KEY = Context.key("grpcops-budget");

    private final Deadline deadline;
    private final boolean defaulted;
    private final BudgetRules rules;
    private final boolean arrivedAsRetry;
    /** Made at the first downstream call and shared by the others (racy but safe: a Deadline is immutable). */
    private @Nullable Deadline downstreamDeadline;

    private Budget(Deadline deadline, boolean defaulted, BudgetRules rules, boolean arrivedAsRetry) {
        this.deadline = deadline;
        this.defaulted = defaulted;
        this.rules = rules;
        this.arrivedAsRetry = arrivedAsRetry;
    }

    /** The budget of the call being served on this thread's context, if any. */
    public static Optional<Budget> current() {
        return Optional.ofNullable(KEY.get());
    }

    /** The budget of the call being served on this thread's context, or null: {@link #current()} without the Optional. */
    public static @Nullable Budget currentOrNull() {
        return KEY.get();
    }

    /**
     * The budget of a call that arrived with {@code callerDeadline} (null: none) under these
     * rules. A deadline further away than {@link BudgetRules#NO_DEADLINE_BEYOND} counts as none.
     */
    public static Budget arrived(Deadline callerDeadline, BudgetRules rules) {
        return arrived(callerDeadline, rules, false);
    }

    /**
     * As {@link #arrived(Deadline, BudgetRules)}, for a call that arrived as a retry (with
     * {@code grpc-previous-rpc-attempts}) when {@code arrivedAsRetry}: its own downstream calls are
     * not retried again: only one hop retries.
     */
    public static Budget arrived(Deadline callerDeadline, BudgetRules rules, boolean arrivedAsRetry) {
        if (callerDeadline == null || rules.usesDefault(callerDeadline.timeRemaining(TimeUnit.NANOSECONDS))) {
            return new Budget(after(rules.defaultBudget()), true, rules, arrivedAsRetry);
        }
        return new Budget(callerDeadline, false, rules, arrivedAsRetry);
    }

    /** A fresh default budget, for work that starts outside any served call. */
    public static Budget fresh(BudgetRules rules) {
        return arrived(null, rules);
    }

    /** {@code context} carrying this budget: run code in it to make it the current budget. */
    public Context attachTo(Context context) {
        return context.withValue(KEY, this);
    }

    /** True when {@code context} carries this budget: code run in it sees this one as {@link #current()}. */
    public boolean isCurrentIn(Context context) {
        return KEY.get(context) == this;
    }

    /** Time left until the budget's deadline (negative once it has passed). */
    public Duration remaining() {
        return Duration.ofNanos(remainingNanos());
    }

    /** {@link #remaining()} in nanoseconds. */
    public long remainingNanos() {
        return deadline.timeRemaining(TimeUnit.NANOSECONDS);
    }

    /** The deadline a downstream call made now would get: remaining − reserve. */
    public Duration downstream() {
        return Duration.ofNanos(rules.downstreamNanos(remainingNanos()));
    }

    /**
     * The deadline of every downstream call: the budget's own, less the reserve, on the same ticker.
     * Pinned to the caller's deadline, it is the same whenever the call is made, and costs no clock read.
     */
    public Deadline downstreamDeadline() {
        Deadline downstream = downstreamDeadline;
        if (downstream == null) {
            downstream = deadline.offset(-rules.reserve().toNanos(), TimeUnit.NANOSECONDS);
            downstreamDeadline = downstream;
        }
        return downstream;
    }

    /** Whether a downstream call made now would be sent (downstream ≥ min-downstream). */
    public boolean allowsCall() {
        return rules.allowsCall(remainingNanos());
    }

    /** Whether a call that failed with UNAVAILABLE may be retried now (downstream ≥ retry-min). */
    public boolean allowsRetry() {
        return rules.allowsRetry(remainingNanos());
    }

    /** True when the caller sent no deadline and the default budget applies. */
    public boolean defaulted() {
        return defaulted;
    }

    /** True when the call arrived as a retry or hedge of an upstream hop: no extra attempt is made under it. */
    public boolean arrivedAsRetry() {
        return arrivedAsRetry;
    }

    @Override
    public String toString() {
        return "Budget[remaining=" + remaining() + (defaulted ? ", default" : "")
                + (arrivedAsRetry ? ", arrived as retry" : "") + "]";
    }

    private static Deadline after(Duration duration) {
        return Deadline.after(duration.toNanos(), TimeUnit.NANOSECONDS);
    }
}
