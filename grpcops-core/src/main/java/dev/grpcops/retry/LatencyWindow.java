package dev.grpcops.retry;

import java.util.Arrays;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.ReentrantLock;

/**
 * A target's last {@value #SIZE} answer latencies and a percentile of them, recomputed every
 * {@value #EVERY} answers by whichever thread records then (a sort of {@value #SIZE} longs), so that
 * reading it costs a volatile read. Racy by design: a sample may overwrite another under contention,
 * which moves a percentile of hundreds by nothing that matters.
 */
final class LatencyWindow {

    static final int SIZE = 512;
    private static final int EVERY = 64;

    private final long[] samples = new long[SIZE];
    private final AtomicLong recorded = new AtomicLong();
    private final ReentrantLock computing = new ReentrantLock();
    private final double percentile;
    private volatile long percentileNanos = -1;

    LatencyWindow(double percentile) {
        this.percentile = percentile;
    }

    void record(long nanos) {
        long n = recorded.getAndIncrement();
        samples[(int) (n % SIZE)] = nanos;
        if ((n + 1) % EVERY == 0 && computing.tryLock()) {
            try {
                int count = (int) Math.min(n + 1, SIZE);
                long[] copy = Arrays.copyOf(samples, count);
                Arrays.sort(copy);
                percentileNanos = copy[(int) Math.min(count - 1, Math.ceil(percentile / 100 * count) - 1)];
            } finally {
                computing.unlock();
            }
        }
    }

    long count() {
        return recorded.get();
    }

    /** The percentile of the last samples, or -1 before the first {@value #EVERY} of them. */
    long percentileNanos() {
        return percentileNanos;
    }
}
