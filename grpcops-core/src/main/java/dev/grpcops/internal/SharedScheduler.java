package dev.grpcops.internal;

import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledThreadPoolExecutor;

/**
 * The one daemon thread that runs the library's timers: admission's queue time-outs, pushed-back
 * retries, hedges, reconnect nudges. Every task only decides and starts or ends a call; none waits
 * for one, so a single thread serves them all. Cancelled tasks leave its queue at once.
 */
public final class SharedScheduler {

    private static final ScheduledExecutorService INSTANCE = create();

    private SharedScheduler() {}

    public static ScheduledExecutorService get() {
        return INSTANCE;
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
