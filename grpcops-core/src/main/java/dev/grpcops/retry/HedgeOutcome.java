package dev.grpcops.retry;

import java.util.Locale;

/** What became of a hedge (the label of {@code grpc_hedges_total}). */
public enum HedgeOutcome {
    /** A second attempt went out: the first had no answer after the hedge delay. */
    SENT,
    /** The hedge answered first; the first attempt was cancelled. */
    WON,
    /** The first attempt answered first; the hedge was cancelled (or failed). */
    LOST,
    /**
     * Not sent: the limiter (token bucket, retry budget) or the hedge's share of calls had no room, or
     * the target's hedges have been losing (one a second is sent then).
     */
    THROTTLED,
    /** Not sent: the deadline budget left could not cover it (reserve + min-downstream). */
    REFUSED;

    /** The metric label: the name in lower case. */
    public String label() {
        return name().toLowerCase(Locale.ROOT);
    }
}
