package dev.grpcops.admission;

/**
 * The arithmetic of an {@link AdaptiveLimit}: samples in, a limit out. Not thread-safe:
 * {@link Admission} calls it under its lock, with its clock.
 *
 * <p>Once a window, the limit moves by the gradient {@code tolerance × baseline / latency} (kept
 * within ½ and 2), plus √limit of headroom, smoothed: a fifth of a step up, half a step down (after
 * Netflix concurrency-limits' Gradient2, which takes a fifth both ways).
 * The baseline is what a call takes without queueing: it is measured by a probe, in which the next
 * {@link #MIN_SAMPLES} calls run with the minimum of calls working (after Envoy's minRTT measurement), at the
 * start, every {@link #PROBE_EVERY_WINDOWS} windows, once the limit has halved since the last probe,
 * and after {@link #PROBE_AFTER_WINDOWS_AT_MIN} windows at the minimum; between probes it only
 * falls, to a lower window latency.
 *
 * <p>The limit is of calls working: a sample is a call's own time, its waits on others (downstream
 * calls, an injected delay) left out. A call holds its seat through those waits too, so the seats
 * are the limit times the window's seat time over its own time (Little's law): a hop whose calls
 * mostly wait on a slower dependency keeps seats for them, and the dependency's own limit, which
 * counts that time as its own work, is the one that falls.
 */
final class GradientLimit {

    /** Samples a window needs to move the limit, and a probe to measure the baseline. */
    static final int MIN_SAMPLES = 10;
    /** Windows between probes: a baseline is never older than this. */
    static final int PROBE_EVERY_WINDOWS = 30;
    /**
     * Windows at the minimum that call for a probe at once: latency that stays high with the fewest
     * seats is the service's own, and a baseline measured before it would pin the limit there.
     */
    static final int PROBE_AFTER_WINDOWS_AT_MIN = 5;
    /**
     * A limit down to this share of what it was at the last probe calls for another: latency that
     * rose without queueing (a slower dependency) would otherwise take the limit all the way down
     * before anything re-measured it, and the capacity with it.
     */
    static final double PROBE_AFTER_FALL_TO = 0.5;
    /** How much of a lower window latency the baseline takes between probes. */
    static final double BASELINE_FALL = 0.25;
    /** How much of each new target the limit takes (Gradient2's smoothing). */
    static final double SMOOTHING = 0.2;
    /**
     * How much of a lower target the limit takes: more than of a higher one, so that a server made
     * smaller sheds its queueing within a few windows, while growth stays cautious.
     */
    static final double FALL_SMOOTHING = 0.5;
    /** How much of a window's seat time over own time the seats take. */
    static final double RATIO_SMOOTHING = 0.5;

    /** One window never more than halves the target, nor more than doubles it. */
    static final double MIN_GRADIENT = 0.5;

    static final double MAX_GRADIENT = 2.0;

    private final int minLimit;
    private final int maxLimit;
    private final long windowNanos;
    private final double tolerance;

    /** Calls working at once. */
    private double limit;
    /** A call's time in its seat over its own time in the last window, at least 1. */
    private double seatsPerWorkingCall = 1;

    private double baselineNanos = Double.NaN;

    /** A probe is under way: the minimum of calls working until it has its samples. The first one starts at once. */
    private boolean probing = true;
    /** Calls seated before it did not run with the probe's seats, and are not its samples. */
    private long probeStart;
    /** At the start every call ran with the probe's seats. */
    private boolean firstProbe = true;

    private long probeSum;
    private int probeSamples;
    private int windowsSinceProbe;
    private int windowsAtMin;
    /** The limit when the last probe ended. */
    private double limitAtProbe;

    private boolean windowOpen;
    private long windowStart;
    private long sampleSum;
    private long seatSum;
    private int samples;
    private int maxInFlight;

    GradientLimit(AdaptiveLimit config, int initialLimit) {
        this.minLimit = config.minLimit();
        this.maxLimit = config.maxLimit();
        this.windowNanos = config.window().toNanos();
        this.tolerance = config.tolerance();
        this.limit = Math.max(minLimit, Math.min(maxLimit, initialLimit));
    }

    /** The seats now: for the minimum of calls working during a probe. */
    int limit() {
        return (int) Math.max(minLimit, Math.min(maxLimit, (probing ? minLimit : limit) * seatsPerWorkingCall));
    }

    /** What a call takes without queueing, as last measured; NaN before the first probe. */
    double baselineNanos() {
        return baselineNanos;
    }

    boolean probing() {
        return probing;
    }

    /** As {@link #sample(long, long, long, int)} for a call that waited on nothing. */
    int sample(long now, long serviceNanos, int inFlight) {
        return sample(now, serviceNanos, serviceNanos, inFlight);
    }

    /**
     * One served call that answered OK: its own service time, its time in the seat (its waits on
     * others included), and the seats in use when it ended. Returns the seats from now on.
     */
    int sample(long now, long serviceNanos, long seatNanos, int inFlight) {
        long service = Math.max(0, serviceNanos);
        long seat = Math.max(service, seatNanos);
        if (probing) {
            // Only calls seated since the probe began ran with its seats.
            if (firstProbe || now - seat - probeStart >= 0) {
                probeSum += service;
                if (++probeSamples >= MIN_SAMPLES) {
                    baselineNanos = Math.max(1, (double) probeSum / probeSamples);
                    probing = false;
                    firstProbe = false;
                    windowOpen = false;
                    limitAtProbe = limit;
                }
            }
            return limit();
        }
        if (!windowOpen) {
            windowOpen = true;
            windowStart = now;
            sampleSum = 0;
            seatSum = 0;
            samples = 0;
            maxInFlight = 0;
        }
        sampleSum += service;
        seatSum += seat;
        samples++;
        maxInFlight = Math.max(maxInFlight, inFlight);
        if (now - windowStart >= windowNanos) {
            windowOpen = false;
            if (samples >= MIN_SAMPLES) {
                // The seats in use were handed out at the window's ratio; the next ones at this one's.
                update((double) sampleSum / samples, maxInFlight / seatsPerWorkingCall);
                // A nanosecond of own time at least per call, so that calls too short for the clock
                // count as short, not as waiting for ever; half of each change, so that one window's
                // noise does not swing the seats.
                double ratio = Math.max(
                        1, Math.min((double) maxLimit / minLimit, (double) seatSum / Math.max(sampleSum, samples)));
                seatsPerWorkingCall += (ratio - seatsPerWorkingCall) * RATIO_SMOOTHING;
                if (++windowsSinceProbe >= PROBE_EVERY_WINDOWS
                        || windowsAtMin >= PROBE_AFTER_WINDOWS_AT_MIN
                        || limit <= limitAtProbe * PROBE_AFTER_FALL_TO && limit > minLimit) {
                    probing = true;
                    probeStart = now;
                    probeSum = 0;
                    probeSamples = 0;
                    windowsSinceProbe = 0;
                    windowsAtMin = 0;
                }
            }
        }
        return limit();
    }

    /** {@code working}: the most seats in use in the window, as calls working. */
    private void update(double windowLatency, double working) {
        double latency = Math.max(1, windowLatency);
        if (latency < baselineNanos) {
            baselineNanos += (latency - baselineNanos) * BASELINE_FALL;
        }
        double gradient = Math.max(MIN_GRADIENT, Math.min(MAX_GRADIENT, tolerance * baselineNanos / latency));
        if (gradient >= 1 && working < limit / 2) {
            windowsAtMin = 0;
            return; // the server does not use what it has: no sign it could take more
        }
        // √limit of headroom: at the baseline the limit keeps probing for more.
        double target = limit * gradient + Math.sqrt(limit);
        double smoothing = target < limit ? FALL_SMOOTHING : SMOOTHING;
        limit = Math.max(minLimit, Math.min(maxLimit, limit * (1 - smoothing) + target * smoothing));
        windowsAtMin = (int) limit <= minLimit ? windowsAtMin + 1 : 0;
    }
}
