package dev.grpcops.warmup;

import io.grpc.Status;
import java.time.Duration;
import java.util.Map;

/**
 * What a warm-up did: calls completed by status, how long it took, and whether it stopped before
 * sending every call.
 *
 * @param statuses completed calls by status code
 * @param took from the first call sent to the last one completed
 * @param cutShort whether it stopped before sending every call: its time limit passed, or the
 *     channel refused calls
 */
public record WarmUpResult(Map<Status.Code, Long> statuses, Duration took, boolean cutShort) {

    public WarmUpResult {
        statuses = Map.copyOf(statuses);
    }

    /** Calls completed, whatever their status. */
    public long calls() {
        return statuses.values().stream().mapToLong(Long::longValue).sum();
    }

    /** Calls that ended {@code OK}. */
    public long ok() {
        return statuses.getOrDefault(Status.Code.OK, 0L);
    }
}
