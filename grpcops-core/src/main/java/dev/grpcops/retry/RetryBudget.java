package dev.grpcops.retry;

import com.google.errorprone.annotations.concurrent.GuardedBy;
import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import java.util.Objects;
import java.util.function.LongSupplier;

/**
 * A retry budget per downstream target (after Finagle's {@code RetryBudget}): extra attempts of the
 * last {@code window} may be at most {@code percent} of its calls, plus a floor of
 * {@code minPerSecond} × window, so that a quiet service can still retry a blip. Counted in ten
 * slots of a tenth of the window each, behind a critical section of a few array reads per target.
 *
 * <pre>{@code
 * RetryBudget budget = RetryBudget.builder().percent(10).window(Duration.ofSeconds(10)).minPerSecond(1).build();
 * }</pre>
 */
public final class RetryBudget implements RetryLimiter {

    private static final int SLOTS = 10;

    private final double percent;
    private final Duration window;
    private final double minPerSecond;
    private final double floor;
    private final long slotNanos;
    private final LongSupplier nanoClock;
    private final Targets<Window> targets;

    private RetryBudget(Builder builder) {
        this.percent = builder.percent;
        this.window = builder.window;
        this.minPerSecond = builder.minPerSecond;
        this.floor = builder.minPerSecond * builder.window.toNanos() / 1e9;
        this.slotNanos = builder.window.toNanos() / SLOTS;
        this.nanoClock = builder.nanoClock;
        this.targets = new Targets<>(target -> new Window(), (target, window) -> {});
    }

    public static Builder builder() {
        return new Builder();
    }

    /** A builder for another budget like this one: the same settings, none of the counts. */
    public Builder toBuilder() {
        return builder()
                .percent(percent)
                .window(window)
                .minPerSecond(minPerSecond)
                .nanoClock(nanoClock);
    }

    /** Extra attempts may be at most this percentage of the window's calls. */
    public double percent() {
        return percent;
    }

    /** The window calls and extra attempts are counted over. */
    public Duration window() {
        return window;
    }

    /** Extra attempts per second of the window allowed on top of the percentage. */
    public double minPerSecond() {
        return minPerSecond;
    }

    @Override
    public void onCall(String target) {
        targets.get(target).called(nanoClock.getAsLong());
    }

    /** Takes room for one extra attempt if the window has it: extra attempts + 1 ≤ percent of calls + floor. */
    @Override
    public boolean tryAcquire(String target) {
        return targets.get(target).tryTake(nanoClock.getAsLong());
    }

    @Override
    public void release(String target) {
        targets.get(target).giveBack(nanoClock.getAsLong());
    }

    /** What the budget allows in a window with this many calls and no extra attempts yet. */
    public double allowed(long callsInWindow) {
        return percent / 100 * callsInWindow + floor;
    }

    /** Extra attempts to {@code target} counted in the current window. */
    public long taken(String target) {
        return targets.get(target).taken(nanoClock.getAsLong());
    }

    /** The targets tracked so far: at most 64 by name, then one shared {@code other}. */
    public List<String> targets() {
        return targets.names();
    }

    /** One target's calls and extra attempts, per slot. */
    private final class Window {

        // Per slot: the slot's number (time / slotNanos), its calls and its extra attempts.
        @GuardedBy("this")
        private final long[] slotNumber = new long[SLOTS];

        @GuardedBy("this")
        private final long[] calls = new long[SLOTS];

        @GuardedBy("this")
        private final long[] extra = new long[SLOTS];

        Window() {
            Arrays.fill(slotNumber, Long.MIN_VALUE);
        }

        synchronized void called(long now) {
            calls[slot(now)]++;
        }

        synchronized boolean tryTake(long now) {
            int current = slot(now);
            long windowCalls = 0;
            long windowExtra = 0;
            for (int i = 0; i < SLOTS; i++) {
                windowCalls += calls[i];
                windowExtra += extra[i];
            }
            if (windowExtra + 1 > allowed(windowCalls) + 1e-9) {
                return false;
            }
            extra[current]++;
            return true;
        }

        synchronized void giveBack(long now) {
            int current = slot(now);
            for (int i = 0; i < SLOTS; i++) {
                int index = Math.floorMod(current - i, SLOTS);
                if (extra[index] > 0) {
                    extra[index]--;
                    return;
                }
            }
        }

        synchronized long taken(long now) {
            slot(now);
            long sum = 0;
            for (long e : extra) {
                sum += e;
            }
            return sum;
        }

        /** The slot of {@code now}, after clearing every slot that has left the window. */
        @GuardedBy("this")
        private int slot(long now) {
            long number = Math.floorDiv(now, slotNanos);
            for (int i = 0; i < SLOTS; i++) {
                if (slotNumber[i] <= number - SLOTS) {
                    slotNumber[i] = Long.MIN_VALUE;
                    calls[i] = 0;
                    extra[i] = 0;
                }
            }
            int index = (int) Math.floorMod(number, (long) SLOTS);
            if (slotNumber[index] != number) {
                slotNumber[index] = number;
                calls[index] = 0;
                extra[index] = 0;
            }
            return index;
        }
    }

    /** The budget's three numbers and its clock. */
    public static final class Builder {

        private double percent = 10;
        private Duration window = Duration.ofSeconds(10);
        private double minPerSecond = 1;
        private LongSupplier nanoClock = System::nanoTime;

        private Builder() {}

        /** Extra attempts may be at most this percentage of the window's calls, 0-100; default 10. */
        public Builder percent(double percent) {
            if (!(percent >= 0) || percent > 100) {
                throw new IllegalArgumentException("budget-percent must be 0-100, got " + percent);
            }
            this.percent = percent;
            return this;
        }

        /** The window calls and extra attempts are counted over, 1 s to 1 h; default 10 s. */
        public Builder window(Duration window) {
            Objects.requireNonNull(window, "budget-window must be set");
            if (window.compareTo(Duration.ofSeconds(1)) < 0 || window.compareTo(Duration.ofHours(1)) > 0) {
                throw new IllegalArgumentException("budget-window must be 1s-1h, got " + window);
            }
            this.window = window;
            return this;
        }

        /** The floor: extra attempts per second of the window allowed on top of the percentage, 0-1000; default 1. */
        public Builder minPerSecond(double minPerSecond) {
            if (!(minPerSecond >= 0) || minPerSecond > 1000) {
                throw new IllegalArgumentException("min-retries-per-second must be 0-1000, got " + minPerSecond);
            }
            this.minPerSecond = minPerSecond;
            return this;
        }

        /** A monotonic clock in nanoseconds; {@link System#nanoTime} by default (tests give a fake one). */
        public Builder nanoClock(LongSupplier nanoClock) {
            this.nanoClock = Objects.requireNonNull(nanoClock, "nanoClock");
            return this;
        }

        public RetryBudget build() {
            return new RetryBudget(this);
        }
    }
}
