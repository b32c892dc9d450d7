package dev.grpcops.cli;

import io.grpc.ConnectivityState;
import io.grpc.ManagedChannel;
import java.io.PrintWriter;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/** One load run: connect, warm up, the measured run, then wait for the calls still outstanding. */
final class LoadRun {

    /** How long to wait for a connection before calling the target unreachable. */
    static final Duration CONNECT_TIMEOUT = Duration.ofSeconds(10);
    /**
     * How long calls outstanding at the end get without --deadline (with one: the deadline + 5s),
     * before they are cancelled; also how long a closed loop with -n waits on a server that answers
     * nothing at all before it stops starting calls.
     */
    static final Duration GRACE = Duration.ofSeconds(10);

    /** The load's shape: a rate or a concurrency; a duration or a count (the other 0). */
    record Shape(
            Integer rate, Integer concurrency, int maxOutstanding, Duration warmUp, Duration duration, long count) {}

    /** The measured phase, and when it ended (its last call ended, or its last send, if later). */
    record Result(LoadStats stats, long endNanos) {}

    private final LoadCaller caller;
    private final Shape shape;
    private final Duration deadline;
    private final PrintWriter err;
    private final boolean forceProgress;

    LoadRun(LoadCaller caller, Shape shape, Duration deadline, PrintWriter err, boolean forceProgress) {
        this.caller = caller;
        this.shape = shape;
        this.deadline = deadline;
        this.err = err;
        this.forceProgress = forceProgress;
    }

    Result run() throws InterruptedException {
        LoadStats warmUp = new LoadStats();
        LoadStats measured = new LoadStats();
        long durationNanos = shape.duration() == null ? 0 : shape.duration().toNanos();
        long sendingEnded;
        List<String> notes = new ArrayList<>();
        try (Progress progress = Progress.to(err, forceProgress)) {
            if (shape.rate() != null) {
                OpenLoop load = new OpenLoop(caller, shape.rate(), shape.maxOutstanding());
                if (!shape.warmUp().isZero()) {
                    follow(progress, "warm-up ", warmUp);
                    load.run(warmUp, shape.warmUp().toNanos(), 0);
                }
                follow(progress, "", measured);
                load.run(measured, durationNanos, shape.count());
            } else {
                ClosedLoop load = new ClosedLoop(caller, shape.concurrency());
                if (!shape.warmUp().isZero()) {
                    follow(progress, "warm-up ", warmUp);
                    load.warmUp(warmUp, shape.warmUp().toNanos());
                }
                follow(progress, "", measured);
                load.run(measured, durationNanos, shape.count(), grace().toNanos());
                if (shape.count() > 0 && measured.sentCount() < shape.count()) {
                    notes.add("no call ended for " + grace().toSeconds() + "s; stopped after starting "
                            + measured.sentCount() + " of " + shape.count() + " calls");
                }
            }
            sendingEnded = System.nanoTime();
            drain(measured, notes);
        }
        notes.forEach(note -> err.println("note: " + note));
        err.flush();
        return new Result(measured, Math.max(measured.lastEndNanos(sendingEnded), sendingEnded));
    }

    private void follow(Progress progress, String label, LoadStats stats) {
        if (progress != null) {
            // the phase starts a moment later; until then its rate counts from now
            stats.start(System.nanoTime());
            progress.follow(label, stats);
        }
    }

    /** Waits for the calls still outstanding; cancels (and counts as CANCELLED) those past the grace. */
    private void drain(LoadStats measured, List<String> notes) throws InterruptedException {
        Duration grace = grace();
        if (!measured.awaitEnded(grace.toNanos())) {
            long left = measured.sentCount() - measured.endedCount();
            caller.cancelAll();
            measured.awaitEnded(TimeUnit.SECONDS.toNanos(5));
            notes.add(left + " calls still outstanding " + grace.toSeconds()
                    + "s after the load ended were cancelled (counted as CANCELLED)");
        }
        long dropped = measured.count(LoadStats.CLIENT_OVERLOADED);
        if (dropped > 0) {
            notes.add(dropped + " intended sends were not made (counted as " + LoadStats.CLIENT_OVERLOADED + "): "
                    + shape.maxOutstanding() + " calls were already outstanding (--max-outstanding)");
        }
    }

    /** How long calls may go unanswered at the end, or (closed loop, -n) all at once, before the run gives up on them. */
    private Duration grace() {
        return deadline == null ? GRACE : deadline.plusSeconds(5);
    }

    /**
     * Waits until {@code channel} connects (READY) or fails to (TRANSIENT_FAILURE), at most
     * {@link #CONNECT_TIMEOUT}; returns the state it reached.
     */
    static ConnectivityState connect(ManagedChannel channel) throws InterruptedException {
        CompletableFuture<ConnectivityState> settled = new CompletableFuture<>();
        watch(channel, channel.getState(true), settled);
        try {
            return settled.get(CONNECT_TIMEOUT.toMillis(), TimeUnit.MILLISECONDS);
        } catch (TimeoutException | ExecutionException e) {
            return channel.getState(false);
        }
    }

    private static void watch(
            ManagedChannel channel, ConnectivityState state, CompletableFuture<ConnectivityState> settled) {
        if (state == ConnectivityState.READY
                || state == ConnectivityState.TRANSIENT_FAILURE
                || state == ConnectivityState.SHUTDOWN) {
            settled.complete(state);
            return;
        }
        channel.notifyWhenStateChanged(state, () -> watch(channel, channel.getState(true), settled));
    }
}
