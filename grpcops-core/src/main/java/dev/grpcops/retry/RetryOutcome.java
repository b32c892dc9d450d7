package dev.grpcops.retry;

import java.util.Locale;

/** What became of a call that failed with {@code UNAVAILABLE} (the label of {@code grpc_budget_retries_total}). */
public enum RetryOutcome {
    /** Retried. */
    ATTEMPTED,
    /** Not retried: the deadline budget recomputed at that moment was below retry-min. */
    REFUSED,
    /** Not retried: the target's token bucket is at or below half, or its retry budget is spent. */
    THROTTLED,
    /** Not retried: the server said no ({@code grpc-retry-pushback-ms} negative or unparsable) or its delay left too little budget. */
    PUSHBACK;

    /** The metric label: the name in lower case. */
    public String label() {
        return name().toLowerCase(Locale.ROOT);
    }
}
