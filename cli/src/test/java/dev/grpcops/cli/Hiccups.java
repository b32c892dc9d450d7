package dev.grpcops.cli;

import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.LockSupport;

/**
 * How long this JVM was kept from running (as jHiccup measures it): a thread asks to wake every
 * millisecond and records by how much it overslept. A long hiccup means the machine or the JVM (GC,
 * safepoints) stalled everything, the load generator and the test server alike.
 */
final class Hiccups implements AutoCloseable {

    private final AtomicLong maxNanos = new AtomicLong();
    private final Thread thread;
    private volatile boolean running = true;

    Hiccups() {
        thread = new Thread(this::measure, "hiccups");
        thread.setDaemon(true);
        thread.start();
    }

    private void measure() {
        long tick = TimeUnit.MILLISECONDS.toNanos(1);
        while (running) {
            long before = System.nanoTime();
            LockSupport.parkNanos(tick);
            maxNanos.accumulateAndGet(System.nanoTime() - before - tick, Math::max);
        }
    }

    /** The longest hiccup so far, in milliseconds. */
    long maxMillis() {
        return TimeUnit.NANOSECONDS.toMillis(maxNanos.get());
    }

    @Override
    public void close() {
        running = false;
    }
}
