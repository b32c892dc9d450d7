package dev.grpcops.client;

/**
 * A peak-sensitive exponentially weighted moving average of latency (Finagle's and Linkerd's): a
 * sample above the average replaces it at once, one below pulls it down with weight
 * 1 − e^(−Δt/τ) (Δt since the last sample), and while nothing is heard the average decays towards
 * zero with the same time constant, so that a replica once slow is tried again. Thread-safe: written
 * under its lock, read without it.
 */
final class PeakEwma {

    private volatile double cost;
    private volatile long stamp;

    PeakEwma(double initialNanos, long now) {
        this.cost = initialNanos;
        this.stamp = now;
    }

    /** Starts over at {@code nanos} from {@code now} (a replica that has just become ready). */
    synchronized void reset(double nanos, long now) {
        cost = nanos;
        stamp = now;
    }

    /** The average now, in nanoseconds, decayed for the time since the last sample. */
    double cost(long now, long decayNanos) {
        double value = cost;
        long elapsed = now - stamp;
        return elapsed <= 0 ? value : value * Math.exp(-elapsed / (double) decayNanos);
    }

    /**
     * A sample of {@code sampleNanos}; when it is only a lower bound of the true latency (a call cut
     * short) it may raise the average, never lower it.
     */
    synchronized void observe(long now, double sampleNanos, boolean lowerBound, long decayNanos) {
        double decayed = cost(now, decayNanos);
        if (sampleNanos > decayed) {
            cost = sampleNanos;
        } else if (lowerBound) {
            cost = decayed;
        } else {
            double weight = Math.exp(-Math.max(0, now - stamp) / (double) decayNanos);
            cost = cost * weight + sampleNanos * (1 - weight);
        }
        stamp = now;
    }
}
