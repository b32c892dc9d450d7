package dev.grpcops.admission;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;

/** A clock and a timer that move only when a test says so (like Kubernetes' eventclock). */
final class FakeTime implements Admission.Timer {

    private long now = 1_000_000_000L;
    private final List<Task> tasks = new ArrayList<>();

    private static final class Task {
        final long due;
        final Runnable run;
        boolean cancelled;

        Task(long due, Runnable run) {
            this.due = due;
            this.run = run;
        }
    }

    long now() {
        return now;
    }

    @Override
    public Runnable schedule(Runnable task, long delayNanos) {
        Task scheduled = new Task(now + delayNanos, task);
        tasks.add(scheduled);
        return () -> scheduled.cancelled = true;
    }

    /** Moves time forward, running every timer that falls due on the way, in order. */
    void advanceMillis(long millis) {
        long target = now + millis * 1_000_000L;
        while (true) {
            Task next = tasks.stream()
                    .filter(t -> !t.cancelled && t.due <= target)
                    .min(Comparator.comparingLong(t -> t.due))
                    .orElse(null);
            if (next == null) {
                break;
            }
            tasks.remove(next);
            now = Math.max(now, next.due);
            next.run.run();
        }
        now = target;
    }

    long pendingTimers() {
        return tasks.stream().filter(t -> !t.cancelled).count();
    }
}
