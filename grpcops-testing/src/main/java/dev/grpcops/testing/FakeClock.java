package dev.grpcops.testing;

import dev.grpcops.admission.Admission;
import io.grpc.Deadline;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.PriorityQueue;
import java.util.concurrent.AbstractExecutorService;
import java.util.concurrent.Callable;
import java.util.concurrent.Delayed;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.FutureTask;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.LongSupplier;
import org.junit.jupiter.api.extension.AfterEachCallback;
import org.junit.jupiter.api.extension.ExtensionContext;

/**
 * Time that moves only when a test says so, for every seam of the library that takes a clock: a
 * nanosecond clock ({@link #nanoClock()}), a scheduler ({@link #scheduler()}), admission's timer
 * ({@link #timer()}) and a gRPC deadline ticker ({@link #ticker()}), all on the same time line.
 * {@link #forward} runs every task that falls due on the way, in deadline order, on the calling
 * thread, with the clock set to each task's due time while it runs (as grpc-java's {@code FakeClock}).
 *
 * <p>Registered as an extension ({@code @RegisterExtension final FakeClock clock = new FakeClock();})
 * it fails a test that leaves a task pending: a component under test that is closed must cancel its
 * timers, and a test that expects a task to run must forward to it.
 */
public final class FakeClock implements AfterEachCallback {

    /** Where time starts: not zero, so that code subtracting timestamps meets realistic values. */
    private static final long START_NANOS = TimeUnit.HOURS.toNanos(1);

    private final Object lock = new Object();
    private final PriorityQueue<Task<?>> tasks = new PriorityQueue<>(
            Comparator.<Task<?>>comparingLong(task -> task.due).thenComparingLong(task -> task.order));
    private long now = START_NANOS;
    private long scheduled;

    private final Scheduler scheduler = new Scheduler();

    /** The current time in nanoseconds. */
    public long nanoTime() {
        synchronized (lock) {
            return now;
        }
    }

    public LongSupplier nanoClock() {
        return this::nanoTime;
    }

    /** Runs its tasks when {@link #forward} reaches them; {@code execute} runs at the next forward or {@link #runDueTasks}. */
    public ScheduledExecutorService scheduler() {
        return scheduler;
    }

    /** Admission's timer on this clock. */
    public Admission.Timer timer() {
        return (task, delayNanos) -> {
            ScheduledFuture<?> future = scheduler.schedule(task, delayNanos, TimeUnit.NANOSECONDS);
            return () -> future.cancel(false);
        };
    }

    /** Deadlines on this clock: {@code Deadline.after(1, SECONDS, clock.ticker())}. */
    public Deadline.Ticker ticker() {
        return new Deadline.Ticker() {
            @Override
            public long nanoTime() {
                return FakeClock.this.nanoTime();
            }
        };
    }

    /** Moves time forward by {@code duration}, running every task due on the way; returns how many ran. */
    public int forward(Duration duration) {
        return forwardNanos(duration.toNanos());
    }

    public int forwardMillis(long millis) {
        return forwardNanos(TimeUnit.MILLISECONDS.toNanos(millis));
    }

    public int forwardNanos(long nanos) {
        if (nanos < 0) {
            throw new IllegalArgumentException("time only moves forward: " + nanos);
        }
        long target;
        synchronized (lock) {
            target = now + nanos;
        }
        int ran = 0;
        while (true) {
            Task<?> next;
            synchronized (lock) {
                next = tasks.peek();
                if (next == null || next.due > target) {
                    now = target;
                    return ran;
                }
                tasks.poll();
                now = Math.max(now, next.due);
            }
            if (next.runOnce()) {
                ran++;
            }
        }
    }

    /** Runs the tasks due now (those {@code execute}d or scheduled with no delay) without moving time. */
    public int runDueTasks() {
        return forwardNanos(0);
    }

    /** Tasks scheduled and neither run nor cancelled. */
    public int pendingTasks() {
        synchronized (lock) {
            return (int) tasks.stream().filter(task -> !task.isCancelled()).count();
        }
    }

    /** The delays from now of the pending tasks, soonest first. */
    public List<Duration> pendingDelays() {
        synchronized (lock) {
            List<Duration> delays = new ArrayList<>();
            tasks.stream()
                    .filter(task -> !task.isCancelled())
                    .sorted(tasks.comparator())
                    .forEach(task -> delays.add(Duration.ofNanos(task.due - now)));
            return delays;
        }
    }

    /** Fails when a task is still pending: whatever scheduled it was not stopped, or the test did not wait for it. */
    public void assertNoLeftoverTasks() {
        List<Duration> left = pendingDelays();
        if (!left.isEmpty()) {
            throw new AssertionError(left.size() + " task(s) left on the fake clock, due in " + left);
        }
    }

    @Override
    public void afterEach(ExtensionContext context) {
        if (context.getExecutionException().isEmpty()) {
            assertNoLeftoverTasks();
        }
    }

    /** A task on the time line; periodic ones put themselves back after each run. */
    private final class Task<V> extends FutureTask<V> implements ScheduledFuture<V> {

        private final long period; // 0: once; > 0: fixed rate; < 0: fixed delay
        private long due;
        /** Among tasks due at the same time, the one scheduled first runs first. */
        private long order;

        Task(Callable<V> callable, long due) {
            super(callable);
            this.due = due;
            this.period = 0;
        }

        Task(Runnable runnable, long due, long period) {
            super(runnable, null);
            this.due = due;
            this.period = period;
        }

        /** Runs once; false when it had been cancelled. */
        boolean runOnce() {
            if (isCancelled()) {
                return false;
            }
            if (period == 0) {
                run();
                rethrowFailure();
                return true;
            }
            if (!runAndReset()) {
                rethrowFailure();
                return true;
            }
            synchronized (lock) {
                due = period > 0 ? due + period : now - period;
                order = scheduled++;
                tasks.add(this);
            }
            return true;
        }

        /** A task that threw fails the test that forwarded time, as it would have failed silently on a real timer. */
        private void rethrowFailure() {
            if (isDone() && !isCancelled()) {
                try {
                    get();
                } catch (ExecutionException e) {
                    throw new AssertionError("a task on the fake clock threw", e.getCause());
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            }
        }

        @Override
        public boolean cancel(boolean mayInterruptIfRunning) {
            boolean cancelled = super.cancel(mayInterruptIfRunning);
            if (cancelled) {
                synchronized (lock) {
                    tasks.remove(this);
                }
            }
            return cancelled;
        }

        @Override
        public long getDelay(TimeUnit unit) {
            return unit.convert(due - nanoTime(), TimeUnit.NANOSECONDS);
        }

        @Override
        public int compareTo(Delayed other) {
            return Long.compare(getDelay(TimeUnit.NANOSECONDS), other.getDelay(TimeUnit.NANOSECONDS));
        }
    }

    private final class Scheduler extends AbstractExecutorService implements ScheduledExecutorService {

        private <V> Task<V> add(Task<V> task) {
            synchronized (lock) {
                task.order = scheduled++;
                tasks.add(task);
            }
            return task;
        }

        private long dueIn(long delay, TimeUnit unit) {
            synchronized (lock) {
                return now + Math.max(0, unit.toNanos(delay));
            }
        }

        @Override
        public ScheduledFuture<?> schedule(Runnable command, long delay, TimeUnit unit) {
            return add(new Task<>(command, dueIn(delay, unit), 0));
        }

        @Override
        public <V> ScheduledFuture<V> schedule(Callable<V> callable, long delay, TimeUnit unit) {
            return add(new Task<>(callable, dueIn(delay, unit)));
        }

        @Override
        public ScheduledFuture<?> scheduleAtFixedRate(Runnable command, long initialDelay, long period, TimeUnit unit) {
            return add(new Task<>(command, dueIn(initialDelay, unit), positive(period, unit)));
        }

        @Override
        public ScheduledFuture<?> scheduleWithFixedDelay(
                Runnable command, long initialDelay, long delay, TimeUnit unit) {
            return add(new Task<>(command, dueIn(initialDelay, unit), -positive(delay, unit)));
        }

        private long positive(long period, TimeUnit unit) {
            long nanos = unit.toNanos(period);
            if (nanos <= 0) {
                throw new IllegalArgumentException("period must be positive: " + period + " " + unit);
            }
            return nanos;
        }

        @Override
        public void execute(Runnable command) {
            schedule(command, 0, TimeUnit.NANOSECONDS);
        }

        @Override
        public void shutdown() {
            throw new UnsupportedOperationException("the fake clock's scheduler is never shut down");
        }

        @Override
        public List<Runnable> shutdownNow() {
            throw new UnsupportedOperationException("the fake clock's scheduler is never shut down");
        }

        @Override
        public boolean isShutdown() {
            return false;
        }

        @Override
        public boolean isTerminated() {
            return false;
        }

        @Override
        public boolean awaitTermination(long timeout, TimeUnit unit) {
            return false;
        }
    }
}
