package dev.grpcops.systemtest;

import io.grpc.Status;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;

/** A few threads calling one operation back to back, counting what succeeded and what failed, when. */
final class SteadyLoad implements AutoCloseable {

    private final AtomicBoolean running = new AtomicBoolean(true);
    private final AtomicInteger succeeded = new AtomicInteger();
    private final Map<Status.Code, AtomicInteger> failed = new ConcurrentHashMap<>();
    private final List<Long> failureTimes = new CopyOnWriteArrayList<>();
    private final List<Integer> successesBeforeFailures = new CopyOnWriteArrayList<>();
    private final List<Thread> threads = new ArrayList<>();

    SteadyLoad(int threadCount, Runnable call) {
        this(threadCount, Duration.ZERO, call);
    }

    /** Each thread pauses {@code pause} after each call: the load's rate, not a synchronisation. */
    SteadyLoad(int threadCount, Duration pause, Runnable call) {
        for (int i = 0; i < threadCount; i++) {
            Thread thread = new Thread(
                    () -> {
                        while (running.get()) {
                            try {
                                call.run();
                                succeeded.incrementAndGet();
                            } catch (RuntimeException e) {
                                failed.computeIfAbsent(Status.fromThrowable(e).getCode(), c -> new AtomicInteger())
                                        .incrementAndGet();
                                failureTimes.add(System.nanoTime());
                                successesBeforeFailures.add(succeeded.get());
                            }
                            if (!pause.isZero()) {
                                try {
                                    Thread.sleep(
                                            pause.toMillis()); // not a synchronisation: the pause sets the load's rate
                                } catch (InterruptedException e) {
                                    return;
                                }
                            }
                        }
                    },
                    "steady-load-" + i);
            thread.setDaemon(true);
            thread.start();
            threads.add(thread);
        }
    }

    int succeeded() {
        return succeeded.get();
    }

    int failedCount() {
        return failed.values().stream().mapToInt(AtomicInteger::get).sum();
    }

    Map<Status.Code, AtomicInteger> failures() {
        return failed;
    }

    /** When (System.nanoTime) each failed call ended. */
    List<Long> failureTimes() {
        return failureTimes;
    }

    /** How many calls had succeeded when each failed call ended, in the order they failed. */
    List<Integer> successesBeforeFailures() {
        return successesBeforeFailures;
    }

    /** Stops the load; each thread ends after its call in flight, whose deadline bounds the wait. */
    @Override
    public void close() throws InterruptedException {
        running.set(false);
        for (Thread thread : threads) {
            thread.join(10_000);
            if (thread.isAlive()) {
                throw new IllegalStateException(thread.getName() + " still calling 10 s after the load stopped");
            }
        }
    }
}
