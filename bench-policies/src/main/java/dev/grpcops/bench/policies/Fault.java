package dev.grpcops.bench.policies;

import java.util.concurrent.ThreadLocalRandom;

/** What the bad replica does wrong in a scenario; the two good ones always answer after the service time. */
enum Fault {
    NONE("none", "no fault"),
    SLOW("slow", "+200 ms on every call"),
    STALLED("stalled", "replies held during the first 200 ms of every second"),
    FAILING("failing", "50 % of calls fail at once with UNAVAILABLE");

    static final long SLOW_EXTRA_MS = 200;
    static final long STALL_MS = 200;
    static final double FAILURE_RATIO = 0.5;

    final String label;
    final String description;

    Fault(String label, String description) {
        this.label = label;
        this.description = description;
    }

    /** Whether this call fails at once. */
    boolean failsNow() {
        return this == FAILING && ThreadLocalRandom.current().nextDouble() < FAILURE_RATIO;
    }

    /**
     * How long to wait before answering a call that arrived at {@code nowMillis} (wall clock: the
     * stall is the first 200 ms of every wall-clock second). A stall holds the answer rather than
     * the thread: one due inside it leaves at its end.
     */
    long replyDelayMs(long serviceMs, long nowMillis) {
        return switch (this) {
            case SLOW -> serviceMs + SLOW_EXTRA_MS;
            case STALLED -> {
                long leave = nowMillis + serviceMs;
                long intoSecond = leave % 1000;
                yield intoSecond < STALL_MS ? serviceMs + STALL_MS - intoSecond : serviceMs;
            }
            default -> serviceMs;
        };
    }
}
