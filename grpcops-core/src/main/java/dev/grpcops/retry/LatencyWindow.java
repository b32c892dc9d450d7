package dev.grpcops.retry;

import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicLongArray;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.LongSupplier;

/**
 * A target's answer latencies of the last {@value #SLOTS} s in a log-linear histogram per second (16
 * buckets per power of two: within 6 %), and a percentile of the newest of them: as many whole
 * seconds as it takes for {@value #TAIL_ANSWERS} answers to lie above the percentile (at 99.5, 2000
 * answers), at least the last whole one and at most all {@value #SLOTS}. Recomputed once a second by
 * whichever thread records then (and every {@value #EARLY_EVERY} answers until the first estimate),
 * so that reading it costs a volatile read and recording an increment.
 *
 * <p>A window measured in time, not in answers (Finagle's windowed histogram): at thousands of
 * answers a second the last few hundred cover milliseconds, and their high percentile follows every
 * passing queue, so that a tenth of the calls, not a few in a thousand, would outlast it. Only the
 * seconds it needs: a just-started process's slow first answers (its code not yet compiled) leave
 * the estimate as soon as enough newer ones are in, instead of holding the delay above every
 * healthy answer for half a minute, while a target called a few times a second is judged on up to
 * {@value #SLOTS} s of them.
 */
final class LatencyWindow {

    /** The most answers a target may be asked to have before its calls are hedged. */
    static final int MAX_MIN_SAMPLES = 512;

    private static final int SLOTS = 30;
    private static final long SLOT_NANOS = TimeUnit.SECONDS.toNanos(1);
    /** Answers above the percentile the estimate rests on: enough that a few more or less barely move it. */
    private static final int TAIL_ANSWERS = 10;

    private static final long RECOMPUTE_NANOS = TimeUnit.SECONDS.toNanos(1);
    private static final int EARLY_EVERY = 64;
    private static final int SUB_BITS = 4;
    private static final int SUB = 1 << SUB_BITS;
    /** Microseconds up to 2^30 (about 18 minutes), and one bucket above. */
    private static final int BUCKETS = (30 - SUB_BITS + 1) * SUB + SUB + 1;

    private final double percentile;
    /** Answers the estimate wants: {@value #TAIL_ANSWERS} of them above the percentile. */
    private final long wanted;

    private final LongSupplier nanoClock;
    private final AtomicLongArray[] slots = new AtomicLongArray[SLOTS];
    private final long[] slotStart = new long[SLOTS];
    private final ReentrantLock computing = new ReentrantLock();
    /** Answers recorded until the first estimate, which is made every {@value #EARLY_EVERY} of them. */
    private final AtomicLong early = new AtomicLong();

    private volatile long currentSlot;
    private volatile long nextCompute;
    private volatile long percentileNanos = -1;
    private volatile long windowCount;

    LatencyWindow(double percentile, LongSupplier nanoClock) {
        this.percentile = percentile;
        this.wanted = (long) Math.ceil(TAIL_ANSWERS * 100 / (100 - percentile));
        this.nanoClock = nanoClock;
        long now = nanoClock.getAsLong();
        for (int i = 0; i < SLOTS; i++) {
            slots[i] = new AtomicLongArray(BUCKETS);
            slotStart[i] = Long.MIN_VALUE;
        }
        this.currentSlot = Math.floorDiv(now, SLOT_NANOS);
        this.slotStart[(int) Math.floorMod(currentSlot, SLOTS)] = currentSlot;
        this.nextCompute = now + RECOMPUTE_NANOS;
    }

    void record(long nanos) {
        long now = nanoClock.getAsLong();
        long slot = Math.floorDiv(now, SLOT_NANOS);
        if (slot != currentSlot) {
            rotate(slot);
        }
        slots[(int) Math.floorMod(slot, SLOTS)].incrementAndGet(bucket(nanos));
        boolean due = now - nextCompute >= 0 || (percentileNanos < 0 && early.incrementAndGet() % EARLY_EVERY == 0);
        if (due && computing.tryLock()) {
            try {
                compute(now);
            } finally {
                computing.unlock();
            }
        }
    }

    /** Answers of the last {@value #SLOTS} s when the percentile was last computed (what min-samples is held to). */
    long count() {
        return windowCount;
    }

    /** The percentile of the window, or -1 before the first estimate. */
    long percentileNanos() {
        return percentileNanos;
    }

    /** A new second: the slot it takes the place of ({@value #SLOTS} s old) is emptied first. */
    private void rotate(long slot) {
        computing.lock();
        try {
            if (slot - currentSlot <= 0) {
                return; // rotated already, or a recording thread's clock read before the rotation
            }
            int index = (int) Math.floorMod(slot, SLOTS);
            if (slotStart[index] != slot) {
                AtomicLongArray counts = slots[index];
                for (int i = 0; i < BUCKETS; i++) {
                    counts.set(i, 0);
                }
                slotStart[index] = slot;
            }
            currentSlot = slot;
        } finally {
            computing.unlock();
        }
    }

    private void compute(long now) {
        long slot = currentSlot;
        long[] sums = new long[BUCKETS];
        long summed = 0;
        long total = 0;
        // Newest second first; older ones while the estimate still wants answers.
        for (int age = 0; age < SLOTS; age++) {
            int index = (int) Math.floorMod(slot - age, SLOTS);
            if (slotStart[index] != slot - age) {
                continue; // nothing recorded in that second
            }
            AtomicLongArray counts = slots[index];
            boolean summing = age <= 1 || summed < wanted;
            for (int i = 0; i < BUCKETS; i++) {
                long c = counts.get(i);
                total += c;
                if (summing) {
                    sums[i] += c;
                    summed += c;
                }
            }
        }
        nextCompute = now + RECOMPUTE_NANOS;
        windowCount = total;
        if (summed == 0) {
            return;
        }
        long rank = (long) Math.ceil(percentile / 100 * summed);
        long seen = 0;
        for (int i = 0; i < BUCKETS; i++) {
            seen += sums[i];
            if (seen >= rank) {
                percentileNanos = TimeUnit.MICROSECONDS.toNanos(upperMicros(i));
                return;
            }
        }
    }

    /** The bucket of a latency: microseconds below 16 exactly, then 16 per power of two. */
    static int bucket(long nanos) {
        long micros = Math.max(0, nanos / 1000);
        if (micros < SUB) {
            return (int) micros;
        }
        int exponent = 63 - Long.numberOfLeadingZeros(micros);
        if (exponent > 30) {
            return BUCKETS - 1;
        }
        int mantissa = (int) (micros >>> (exponent - SUB_BITS)) & (SUB - 1);
        return (exponent - SUB_BITS + 1) * SUB + mantissa;
    }

    /** The largest latency, in microseconds, that falls in bucket {@code index}. */
    static long upperMicros(int index) {
        if (index < SUB) {
            return index;
        }
        if (index == BUCKETS - 1) {
            return Long.MAX_VALUE / 1000;
        }
        int exponent = index / SUB + SUB_BITS - 1;
        int mantissa = index % SUB;
        return ((long) (SUB + mantissa + 1) << (exponent - SUB_BITS)) - 1;
    }
}
