package dev.grpcops.admission;

import java.time.Duration;

/**
 * A call admission turned away: which level, why, and when the caller may come back (sent as
 * {@code grpc-retry-pushback-ms}).
 */
public record Rejection(String level, RejectReason reason, Duration retryAfter) {

    /** What the caller reads in the status description. */
    public String describe() {
        if (reason == RejectReason.DRAINING) {
            return "server is draining: call not started at priority level '" + level + "', try another replica";
        }
        if (reason == RejectReason.CANNOT_FINISH) {
            return "deadline: when its turn came at priority level '" + level
                    + "', the call's remaining budget no longer covered the level's service time (cannot-finish)";
        }
        return "overloaded: priority level '" + level + "' rejected the call (" + reason.label() + "); retry after "
                + retryAfter.toMillis() + " ms";
    }
}
