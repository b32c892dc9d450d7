package dev.grpcops.internal;

import java.time.Duration;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Consumer;
import java.util.function.LongSupplier;
import org.slf4j.Logger;

/**
 * One log line per interval for something that may happen thousands of times a second: the first
 * occurrence is logged at once, later ones are counted and reported with the next line due.
 */
public final class RateLimitedLog {

    private final Consumer<String> sink;
    private final long intervalNanos;
    private final LongSupplier nanoTime;
    private final AtomicLong unreported = new AtomicLong();
    private final AtomicLong nextLineAt;

    /** Lines go to {@code log} at WARN. */
    public RateLimitedLog(Logger log, Duration interval) {
        this(log::warn, interval, System::nanoTime);
    }

    RateLimitedLog(Consumer<String> sink, Duration interval, LongSupplier nanoTime) {
        this.sink = sink;
        this.intervalNanos = interval.toNanos();
        this.nanoTime = nanoTime;
        this.nextLineAt = new AtomicLong(nanoTime.getAsLong());
    }

    /** Counts one occurrence; logs {@code what} (with the count since the last line) if a line is due. */
    public void warn(String what) {
        unreported.incrementAndGet();
        long now = nanoTime.getAsLong();
        long due = nextLineAt.get();
        if (now - due >= 0 && nextLineAt.compareAndSet(due, now + intervalNanos)) {
            long reported = unreported.getAndSet(0);
            sink.accept(what + " (" + reported + (reported == 1 ? " time" : " times")
                    + " since the last such line; at most one line per " + Duration.ofNanos(intervalNanos) + ")");
        }
    }
}
