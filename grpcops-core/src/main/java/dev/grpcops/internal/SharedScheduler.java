package dev.grpcops.internal;

import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;

/**
 * The library's two timer threads: this precise one (deferred cancellations, warm-up's time limit,
 * injected delays, reconnect nudges) and the {@linkplain #coarse() coarse} one (hedges, pushed-back
 * retries, admission's queue time-outs). Every task only decides and starts or ends a
 * call; none waits for one, so a thread each serves them all. Cancelled tasks leave the precise
 * one's queue at once.
 */
public final class SharedScheduler {

    private static final ScheduledExecutorService INSTANCE = create();

    /** One tick: hedge delays are 2 ms and up, pushback and queue time-outs are in milliseconds. */
    private static final long COARSE_TICK_NANOS = TimeUnit.MILLISECONDS.toNanos(1);

    private SharedScheduler() {}

    public static ScheduledExecutorService get() {
        return INSTANCE;
    }

    /**
     * The timer of hedges, pushed-back retries and admission's queue time-outs: a task per hedged
     * or queued call, nearly all cancelled before they fire, on a {@link CoarseTimer} that wakes at
     * most once a millisecond.
     */
    public static ScheduledExecutorService coarse() {
        return Coarse.INSTANCE;
    }

    private static final class Coarse {
        static final ScheduledExecutorService INSTANCE = new CoarseTimer("grpcops-coarse-timer", COARSE_TICK_NANOS);
    }

    private static ScheduledExecutorService create() {
        ScheduledThreadPoolExecutor executor = new ScheduledThreadPoolExecutor(1, task -> {
            Thread thread = new Thread(task, "grpcops-timer");
            thread.setDaemon(true);
            return thread;
        });
        executor.setRemoveOnCancelPolicy(true);
        return executor;
    }
}
