package dev.grpcops.cli;

import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Fixed concurrency, closed loop: N calls always outstanding; each answer starts the next call,
 * on the thread that received it (no thread per call, none waiting). Latency counts from the
 * actual send. The slots carry over from the warm-up into the measured run without a gap, so the
 * server sees N outstanding throughout.
 */
final class ClosedLoop {

    private final LoadCaller caller;
    private final int concurrency;
    private volatile Phase phase;

    ClosedLoop(LoadCaller caller, int concurrency) {
        this.caller = caller;
        this.concurrency = concurrency;
    }

    /** Runs an open-ended warm-up into {@code stats} for {@code durationNanos}; its calls carry over. */
    void warmUp(LoadStats stats, long durationNanos) throws InterruptedException {
        Phase warmUp = new Phase(stats, Long.MAX_VALUE);
        begin(warmUp, Long.MAX_VALUE);
        OpenLoop.waitUntil(stats.startNanos() + durationNanos);
    }

    /**
     * Runs into {@code stats} for {@code durationNanos} or {@code count} calls (the other one 0), and
     * returns once no further call will be started; calls then still outstanding may end later.
     * With a count, a server that answers nothing for {@code stallNanos} ends the run early (every
     * slot is waiting on it): no further call is started, and the calls outstanding are left to the
     * caller's drain.
     */
    void run(LoadStats stats, long durationNanos, long count, long stallNanos) throws InterruptedException {
        Phase measured = new Phase(stats, count == 0 ? Long.MAX_VALUE : count);
        begin(measured, durationNanos == 0 ? Long.MAX_VALUE : durationNanos);
        if (count == 0) {
            OpenLoop.waitUntil(measured.endNanos);
            return;
        }
        long ended = caller.ended();
        while (!measured.lastTicketTaken.await(stallNanos, TimeUnit.NANOSECONDS)) {
            long endedNow = caller.ended();
            if (endedNow == ended) {
                measured.endNanos = System.nanoTime();
                return;
            }
            ended = endedNow;
        }
    }

    private void begin(Phase next, long durationNanos) {
        long now = System.nanoTime();
        next.stats.start(now);
        next.endNanos = durationNanos == Long.MAX_VALUE ? Long.MAX_VALUE : now + durationNanos;
        boolean first = phase == null;
        phase = next;
        if (first) {
            for (int slot = 0; slot < concurrency; slot++) {
                next();
            }
        }
    }

    /** One slot's next call, in the current phase; the slot ends when the phase has no more to start. */
    private void next() {
        Phase current = phase;
        long ticket = current.take();
        if (ticket > 0) {
            caller.call(System.nanoTime(), current.stats, this::next);
            if (ticket == 1) {
                // Only once the last call counts as sent: the run's drain waits for every call sent.
                current.lastTicketTaken.countDown();
            }
        }
    }

    private static final class Phase {
        final LoadStats stats;
        final AtomicLong tickets;
        final CountDownLatch lastTicketTaken = new CountDownLatch(1);
        volatile long endNanos;

        Phase(LoadStats stats, long count) {
            this.stats = stats;
            this.tickets = new AtomicLong(count);
        }

        /** The ticket taken (the last is 1), or 0 or less when the phase starts no more calls. */
        long take() {
            if (endNanos != Long.MAX_VALUE && System.nanoTime() >= endNanos) {
                return 0;
            }
            return tickets.getAndDecrement();
        }
    }
}
