package dev.grpcops.cli;

import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.LongAdder;
import org.HdrHistogram.Histogram;
import org.HdrHistogram.Recorder;

/**
 * What one phase of a load run (the warm-up, or the measured run) saw: calls started, how each
 * ended, and their latencies. Recording is lock-free, from any thread.
 */
final class LoadStats {

    /** The status counted for an intended send that was never made: too many calls outstanding. */
    static final String CLIENT_OVERLOADED = "CLIENT_OVERLOADED";

    /** Latencies are recorded in microseconds, up to an hour, to 3 significant digits. */
    private static final long MAX_MICROS = TimeUnit.HOURS.toMicros(1);

    private final AtomicLong sent = new AtomicLong();
    private final AtomicLong ended = new AtomicLong();
    private final Map<String, LongAdder> statuses = new ConcurrentHashMap<>();
    private final Recorder recorder = new Recorder(3);
    private final AtomicLong lastEndNanos = new AtomicLong(Long.MIN_VALUE);
    private volatile long startNanos;
    private Histogram latency; // guarded by this
    private Histogram interval; // guarded by this

    /** Marks the start of the phase; the measured period runs from here. */
    void start(long nanos) {
        startNanos = nanos;
    }

    long startNanos() {
        return startNanos;
    }

    /** Counts a call about to be started; call before starting it. */
    void sent() {
        sent.incrementAndGet();
    }

    /** A call sent ended with {@code status}, {@code latencyNanos} after its (intended) send time. */
    void ended(String status, long latencyNanos, long nowNanos) {
        recorder.recordValue(Math.min(Math.max(latencyNanos / 1000, 0), MAX_MICROS));
        count(status, nowNanos);
    }

    /** An intended send that was dropped client-side: counted as sent and ended, no latency. */
    void dropped(long nowNanos) {
        sent.incrementAndGet();
        count(CLIENT_OVERLOADED, nowNanos);
    }

    private void count(String status, long nowNanos) {
        statuses.computeIfAbsent(status, s -> new LongAdder()).increment();
        lastEndNanos.accumulateAndGet(nowNanos, Math::max);
        if (ended.incrementAndGet() >= sent.get()) {
            synchronized (this) {
                notifyAll();
            }
        }
    }

    long sentCount() {
        return sent.get();
    }

    long endedCount() {
        return ended.get();
    }

    long count(String status) {
        LongAdder adder = statuses.get(status);
        return adder == null ? 0 : adder.sum();
    }

    /** Calls ended per status code name, sorted by name. */
    Map<String, Long> statuses() {
        Map<String, Long> counts = new TreeMap<>();
        statuses.forEach((status, count) -> counts.put(status, count.sum()));
        return counts;
    }

    /** When the last call ended, or {@code orElse} if none has. */
    long lastEndNanos(long orElse) {
        long last = lastEndNanos.get();
        return last == Long.MIN_VALUE ? orElse : last;
    }

    /** Latencies (µs) of every call ended so far; a copy. */
    synchronized Histogram latencyMicros() {
        interval = recorder.getIntervalHistogram(interval);
        if (latency == null) {
            latency = new Histogram(3);
        }
        latency.add(interval);
        return latency.copy();
    }

    /**
     * Waits until every call sent has ended (the caller has stopped sending), at most
     * {@code timeoutNanos}; true if they all did.
     */
    synchronized boolean awaitEnded(long timeoutNanos) throws InterruptedException {
        long until = System.nanoTime() + timeoutNanos;
        while (ended.get() < sent.get()) {
            long left = until - System.nanoTime();
            if (left <= 0) {
                return false;
            }
            TimeUnit.NANOSECONDS.timedWait(this, left);
        }
        return true;
    }
}
