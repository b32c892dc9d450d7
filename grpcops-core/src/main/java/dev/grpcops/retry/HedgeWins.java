package dev.grpcops.retry;

import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.LongSupplier;

/**
 * Whether a target's recent hedges have been winning: a score that a won hedge raises by
 * {@value #WON} and a lost one lowers by 1, held within {@value #BOUND} either way. It is losing
 * once it falls to -{@value #LOSING}: fewer than one in {@value #WON_PLUS_ONE} of the last dozens of
 * hedges won. A hedge that wins while the target is losing ends it at once.
 *
 * <p>Hedges win when the slow answers are one replica's (a hedge to another answers first); they
 * lose when the whole target is slow (overloaded, or its only replica), where a second attempt only
 * adds load and, cancelled, one more reset on the connection. While losing, {@link Retry} sends one
 * hedge a second to the target (a probe, whose outcome tells when hedges win again) and learns the
 * latency of every first whose hedge was held back, so that the delay rises to the target's latency.
 *
 * <p>One in ten, not more: against a healthy target hedges follow the caller's and the replicas'
 * passing pauses, and a quarter to a half of them win (measured by {@code TailBench}, docs/benchmarks.md); a threshold
 * among those held hedges back now and then with every replica healthy, and a replica that turned
 * slow then waited for probes. Against a whole target that is slow, none win.
 */
final class HedgeWins {

    private static final int WON = 9;
    private static final int WON_PLUS_ONE = WON + 1;
    private static final int LOSING = 8;
    private static final int BOUND = 64;
    private static final long PROBE_EVERY_NANOS = TimeUnit.SECONDS.toNanos(1);

    private final LongSupplier nanoClock;
    private final AtomicInteger score = new AtomicInteger();
    private final AtomicLong nextProbe;

    HedgeWins(LongSupplier nanoClock) {
        this.nanoClock = nanoClock;
        this.nextProbe = new AtomicLong(nanoClock.getAsLong());
    }

    void won() {
        score.updateAndGet(s -> Math.min(BOUND, Math.max(s, -LOSING) + WON));
    }

    void lost() {
        score.updateAndGet(s -> Math.max(-BOUND, s - 1));
    }

    /** Hedges have been losing (false before any was decided). */
    boolean losing() {
        return score.get() <= -LOSING;
    }

    /** Whether a hedge may go out now: always while hedges win, one a second while they lose. */
    boolean mayHedge() {
        if (!losing()) {
            return true;
        }
        long now = nanoClock.getAsLong();
        long next = nextProbe.get();
        return now - next >= 0 && nextProbe.compareAndSet(next, now + PROBE_EVERY_NANOS);
    }
}
