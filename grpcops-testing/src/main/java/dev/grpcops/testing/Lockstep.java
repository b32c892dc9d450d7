package dev.grpcops.testing;

import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.BooleanSupplier;

/**
 * Two threads that race one job each, round after round, held in step by barriers: the harness of
 * the tests that run a race thousands of times with random gaps. Each round starts both jobs once
 * both threads are awake (waking from a barrier takes longer than the whole race), and ends when
 * both have ended. Close it after the test ({@code @AfterEach}).
 */
public final class Lockstep implements AutoCloseable {

    private final Racer first;
    private final Racer second;
    private final CyclicBarrier go = new CyclicBarrier(3);
    private final CyclicBarrier done = new CyclicBarrier(3);

    /** Two racers, their threads named {@code firstName} and {@code secondName}. */
    public Lockstep(String firstName, String secondName) {
        first = new Racer(firstName);
        second = new Racer(secondName);
        first.start();
        second.start();
    }

    /**
     * Runs {@code firstJob} and {@code secondJob} at once, on the two threads; returns once both have
     * ended. An {@link AssertionError} names the thread whose job threw.
     */
    public void race(Runnable firstJob, Runnable secondJob) throws Exception {
        AtomicInteger awake = new AtomicInteger();
        first.job = () -> {
            bothAwake(awake);
            firstJob.run();
        };
        second.job = () -> {
            bothAwake(awake);
            secondJob.run();
        };
        go.await(10, TimeUnit.SECONDS);
        done.await(10, TimeUnit.SECONDS);
        for (Racer racer : new Racer[] {first, second}) {
            if (racer.failure != null) {
                throw new AssertionError("what the " + racer.getName() + " thread threw", racer.failure);
            }
        }
    }

    /** The thread that runs each round's first job. */
    public Thread firstThread() {
        return first;
    }

    /** The thread that runs each round's second job. */
    public Thread secondThread() {
        return second;
    }

    /** Spins 0 to {@code max - 1} times: a random gap of a few nanoseconds to microseconds. */
    public static void spin(int max) {
        int n = ThreadLocalRandom.current().nextInt(max);
        for (int i = 0; i < n; i++) {
            Thread.onSpinWait();
        }
    }

    /** Spins a little, then yields until {@code condition} holds: on a busy machine the other thread may not be running. */
    public static void waitFor(BooleanSupplier condition) {
        for (int i = 0; !condition.getAsBoolean(); i++) {
            if (i < 2_000) {
                Thread.onSpinWait();
            } else {
                Thread.yield();
            }
        }
    }

    private static void bothAwake(AtomicInteger awake) {
        awake.incrementAndGet();
        waitFor(() -> awake.get() >= 2);
    }

    @Override
    public void close() {
        first.interrupt();
        second.interrupt();
        go.reset();
        done.reset();
    }

    /** A thread that runs one job per round. */
    private final class Racer extends Thread {
        volatile Runnable job;
        volatile Throwable failure;

        Racer(String name) {
            super(name);
            setDaemon(true);
        }

        @Override
        public void run() {
            try {
                while (!isInterrupted()) {
                    go.await();
                    try {
                        job.run();
                    } catch (Throwable e) {
                        failure = e;
                    }
                    done.await();
                }
            } catch (Exception stopped) {
                // interrupted or the barrier broken: the test is over
            }
        }
    }
}
