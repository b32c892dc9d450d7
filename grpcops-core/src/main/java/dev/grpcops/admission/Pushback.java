package dev.grpcops.admission;

/**
 * How long a rejected caller is told to stay away (APF's Retry-After, sent as
 * {@code grpc-retry-pushback-ms}): it starts at the initial value, doubles for every second in
 * which rejections went on, up to the maximum, and shrinks by the initial value for every second
 * without one. Guarded by the admission's lock.
 */
final class Pushback {

    private static final long SECOND = 1_000_000_000L;

    private final long initialMillis;
    private final long maxMillis;
    private long currentMillis;
    private long windowStart;
    private boolean started;
    private int rejectionsInWindow;

    Pushback(long initialMillis, long maxMillis) {
        this.initialMillis = initialMillis;
        this.maxMillis = maxMillis;
        this.currentMillis = initialMillis;
    }

    /** Counts a rejection at {@code now} and returns the pushback to send with it, in milliseconds. */
    long rejected(long now) {
        roll(now);
        rejectionsInWindow++;
        return currentMillis;
    }

    private void roll(long now) {
        if (!started) {
            started = true;
            windowStart = now;
            return;
        }
        long seconds = (now - windowStart) / SECOND;
        if (seconds <= 0) {
            return;
        }
        if (rejectionsInWindow > 0) {
            currentMillis = Math.min(maxMillis, currentMillis * 2);
            seconds--;
        }
        // Every quiet second gives back one step; many quiet seconds reset it.
        long shrink = seconds >= 64 ? Long.MAX_VALUE / 2 : seconds * initialMillis;
        currentMillis = Math.max(initialMillis, currentMillis - shrink);
        rejectionsInWindow = 0;
        windowStart = now - (now - windowStart) % SECOND;
    }
}
