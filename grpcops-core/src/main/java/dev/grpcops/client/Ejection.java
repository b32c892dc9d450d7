package dev.grpcops.client;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;

/**
 * One replica's standing with {@link OutlierDetection}: the judged calls of the current interval
 * (counted from any thread as calls end), and whether and since when it is out of the pick (touched
 * only in the balancer's synchronization context). {@link #judge} runs the rules over every
 * replica of a balancer once an interval.
 */
final class Ejection {

    private final AtomicLong successes = new AtomicLong();
    private final AtomicLong failures = new AtomicLong();

    // The balancer's synchronization context only.
    private long lastSuccesses;
    private long lastFailures;
    private long ejectedAtNanos;
    private boolean ejected;
    private int multiplier;

    /** A call ended: a success or a replica failure is judged; anything else is not this replica's doing. */
    void record(CallOutcome outcome) {
        if (outcome.definitive()) {
            successes.incrementAndGet();
        } else if (outcome.replicaFailure()) {
            failures.incrementAndGet();
        }
    }

    boolean ejected() {
        return ejected;
    }

    /** Ejections in a row that lengthen the next one. */
    int multiplier() {
        return multiplier;
    }

    private long volume() {
        return lastSuccesses + lastFailures;
    }

    private double successRate() {
        return (double) lastSuccesses / volume();
    }

    private void eject(long now) {
        ejected = true;
        ejectedAtNanos = now;
        multiplier++;
    }

    /**
     * One interval's judgement (gRFC A50): each replica's counts of the interval are taken, the
     * success-rate and failure-percentage rules eject (within max-ejection-percent), and replicas
     * whose time out is over come back. Returns whether any replica went out or came back.
     */
    static boolean judge(OutlierDetection config, List<Ejection> replicas, long now) {
        for (Ejection replica : replicas) {
            replica.lastSuccesses = replica.successes.getAndSet(0);
            replica.lastFailures = replica.failures.getAndSet(0);
        }
        boolean changed = false;
        List<Ejection> judged = new ArrayList<>();
        for (Ejection replica : replicas) {
            if (replica.volume() >= config.requestVolume()) {
                judged.add(replica);
            }
        }
        // Success rate: only among three or more, where the peers' spread means something.
        if (judged.size() >= Math.max(3, config.minimumHosts())) {
            double mean =
                    judged.stream().mapToDouble(Ejection::successRate).average().orElse(1);
            double variance = judged.stream()
                    .mapToDouble(replica -> Math.pow(replica.successRate() - mean, 2))
                    .average()
                    .orElse(0);
            double threshold = mean - config.successRateStdevFactor() * Math.sqrt(variance);
            for (Ejection replica : judged) {
                if (maxedOut(config, replicas)) {
                    break;
                }
                if (!replica.ejected && replica.successRate() < threshold) {
                    replica.eject(now);
                    changed = true;
                }
            }
        }
        if (judged.size() >= config.minimumHosts()) {
            for (Ejection replica : judged) {
                if (maxedOut(config, replicas)) {
                    break;
                }
                double failurePercent = 100.0 * replica.lastFailures / replica.volume();
                if (!replica.ejected && failurePercent >= config.failurePercentage() && replica.lastFailures > 0) {
                    replica.eject(now);
                    changed = true;
                }
            }
        }
        long base = config.baseEjectionTime().toNanos();
        long longest = Math.max(base, config.maxEjectionTime().toNanos());
        for (Ejection replica : replicas) {
            if (replica.ejected) {
                long out = Math.min(base * (long) replica.multiplier, longest);
                if (now - replica.ejectedAtNanos >= out) {
                    replica.ejected = false;
                    changed = true;
                }
            } else if (replica.multiplier > 0) {
                replica.multiplier--;
            }
        }
        return changed;
    }

    /** No more ejection: max-ejection-percent of the replicas is out already. */
    private static boolean maxedOut(OutlierDetection config, List<Ejection> replicas) {
        long out = replicas.stream().filter(Ejection::ejected).count();
        return 100.0 * out / replicas.size() >= config.maxEjectionPercent();
    }
}
