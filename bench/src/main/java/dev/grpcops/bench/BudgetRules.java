package dev.grpcops.bench;

import io.grpc.Deadline;
import java.util.concurrent.TimeUnit;

/**
 * The budget rules of design §4, written out as numbers, as a hand-written service would have them
 * (deliberately not grpcops-core's {@code BudgetRules}). A served call's budget is a
 * {@link Deadline}: the caller's, or now + DEFAULT when the caller sent none.
 */
final class BudgetRules {

    /** What a hop keeps for itself: a downstream call gets remaining − RESERVE. */
    static final long RESERVE_NANOS = TimeUnit.MILLISECONDS.toNanos(200);
    /** The budget of a call that arrives with no deadline (or one more than 10⁶ s away). */
    static final long DEFAULT_NANOS = TimeUnit.MILLISECONDS.toNanos(2000);
    /** Below this downstream budget the call is not sent: DEADLINE_EXCEEDED at once. */
    static final long MIN_DOWNSTREAM_NANOS = TimeUnit.MILLISECONDS.toNanos(300);
    /** A call that failed with UNAVAILABLE is tried once more only if remaining − RESERVE ≥ this. */
    static final long RETRY_MIN_NANOS = TimeUnit.MILLISECONDS.toNanos(700);
    /** A caller deadline further away than this counts as none. */
    static final long NO_DEADLINE_BEYOND_NANOS = TimeUnit.SECONDS.toNanos(1_000_000);

    private BudgetRules() {}

    /** The budget of a call that arrived with {@code callerDeadline} (null: none). */
    static Deadline arrival(Deadline callerDeadline) {
        if (callerDeadline == null || callerDeadline.timeRemaining(TimeUnit.NANOSECONDS) > NO_DEADLINE_BEYOND_NANOS) {
            return Deadline.after(DEFAULT_NANOS, TimeUnit.NANOSECONDS);
        }
        return callerDeadline;
    }

    /** remaining − RESERVE, in nanoseconds (negative once overdrawn). */
    static long downstreamNanos(Deadline budget) {
        return budget.timeRemaining(TimeUnit.NANOSECONDS) - RESERVE_NANOS;
    }

    /** The deadline for a downstream call sent now, or null when the budget no longer allows one. */
    static Deadline downstream(Deadline budget) {
        long nanos = downstreamNanos(budget);
        return nanos < MIN_DOWNSTREAM_NANOS ? null : Deadline.after(nanos, TimeUnit.NANOSECONDS);
    }

    /** Whether a call that failed with UNAVAILABLE may be sent once more, now. */
    static boolean allowsRetry(Deadline budget) {
        return downstreamNanos(budget) >= RETRY_MIN_NANOS;
    }
}
