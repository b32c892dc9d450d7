package dev.grpcops.admission;

import java.time.Duration;
import java.util.HashSet;
import java.util.List;
import java.util.Set;

/**
 * The server-wide admission settings (design §9).
 *
 * @param limit seats: calls the server executes at once, shared by the levels
 * @param levels the priority levels, sharing the seats by their shares
 * @param maxWait longest a call waits in a queue, also when its deadline would allow more
 * @param retryPushback the first {@code grpc-retry-pushback-ms} a rejected caller is told
 * @param maxRetryPushback the most it grows to while rejections go on (it doubles every second they do)
 */
public record AdmissionConfig(
        int limit,
        List<PriorityLevelConfig> levels,
        Duration maxWait,
        Duration retryPushback,
        Duration maxRetryPushback) {

    public AdmissionConfig {
        if (limit < 1) {
            throw new InvalidAdmissionConfigException("limit", "must be at least 1 seat, got " + limit);
        }
        if (levels == null || levels.isEmpty()) {
            throw new InvalidAdmissionConfigException("levels", "must define at least one priority level");
        }
        Set<String> names = new HashSet<>();
        for (PriorityLevelConfig level : levels) {
            if (!names.add(level.name())) {
                throw new InvalidAdmissionConfigException("levels." + level.name(), "is defined twice");
            }
        }
        if (levels.size() > limit) {
            throw new InvalidAdmissionConfigException(
                    "limit",
                    "must give each of the " + levels.size() + " priority levels at least one seat, got " + limit);
        }
        requirePositive(maxWait, "max-wait");
        requirePositive(retryPushback, "retry-pushback");
        requirePositive(maxRetryPushback, "max-retry-pushback");
        if (maxRetryPushback.compareTo(retryPushback) < 0) {
            throw new InvalidAdmissionConfigException(
                    "max-retry-pushback",
                    "must not be below retry-pushback (" + retryPushback + "), got " + maxRetryPushback);
        }
        levels = List.copyOf(levels);
    }

    /** Checks that every level {@code policy} sends calls to is defined here. */
    public void check(CallerPolicy policy) {
        Set<String> defined = new HashSet<>();
        levels.forEach(level -> defined.add(level.name()));
        policy.referencedLevels().forEach((field, level) -> {
            if (!defined.contains(level)) {
                throw new InvalidAdmissionConfigException(
                        field, "names priority level '" + level + "', which is not defined (defined: " + defined + ")");
            }
        });
    }

    private static void requirePositive(Duration duration, String field) {
        if (duration == null || duration.isNegative() || duration.isZero()) {
            throw new InvalidAdmissionConfigException(field, "must be positive, got " + duration);
        }
    }
}
