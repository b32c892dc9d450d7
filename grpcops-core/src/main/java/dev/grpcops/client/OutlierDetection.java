package dev.grpcops.client;

import java.time.Duration;
import java.util.List;
import java.util.Map;

/**
 * grpc-java's {@code outlier_detection_experimental} (gRFC A50), as a client channel's balancer
 * wraps it: every {@code interval}, a replica that failed at least {@code failurePercentage} % of at
 * least {@code requestVolume} calls, or whose success rate is 1.9 standard deviations below its
 * peers', is taken out of the pick for {@code baseEjectionTime} (longer each time it happens again,
 * up to {@code maxEjectionTime}), then tried again. grpc-java checks {@code maxEjectionPercent}
 * before each ejection, so the share out can pass it by one replica: 33 % keeps it at most half
 * (one of two or three, two of four to six). Every non-OK status counts as a failure.
 *
 * @param interval how often replicas are judged
 * @param baseEjectionTime how long a replica stays out the first time
 * @param maxEjectionTime the longest it stays out, however often it is ejected
 * @param maxEjectionPercent no ejection once this % of the replicas is out (33: never more than half)
 * @param failurePercentage a replica failing this % of its calls or more is ejected
 * @param minimumHosts replicas with enough calls needed before anyone is judged
 * @param requestVolume calls a replica needs in an interval to be judged
 */
public record OutlierDetection(
        Duration interval,
        Duration baseEjectionTime,
        Duration maxEjectionTime,
        int maxEjectionPercent,
        int failurePercentage,
        int minimumHosts,
        int requestVolume) {

    /**
     * Tuned for a few replicas per service: judged every second on 10 calls or more, a replica
     * failing 30 % of them goes out for 10 s (up to 60 s), never more than half of them.
     */
    public static final OutlierDetection DEFAULTS =
            new OutlierDetection(Duration.ofSeconds(1), Duration.ofSeconds(10), Duration.ofSeconds(60), 33, 30, 2, 10);

    public OutlierDetection {
        if (interval.isNegative()
                || interval.isZero()
                || baseEjectionTime.isNegative()
                || baseEjectionTime.isZero()
                || maxEjectionTime.compareTo(baseEjectionTime) < 0) {
            throw new IllegalArgumentException("outlier detection: interval and base-ejection-time must be positive,"
                    + " max-ejection-time at least base-ejection-time");
        }
        if (maxEjectionPercent < 0 || maxEjectionPercent > 100 || failurePercentage < 0 || failurePercentage > 100) {
            throw new IllegalArgumentException(
                    "outlier detection: max-ejection-percent and failure-percentage must be 0-100");
        }
        if (minimumHosts < 1 || requestVolume < 1) {
            throw new IllegalArgumentException(
                    "outlier detection: minimum-hosts and request-volume must be at least 1");
        }
    }

    /** The {@code outlier_detection_experimental} config, over {@code childPolicy}. */
    Map<String, ?> config(List<Map<String, ?>> childPolicy) {
        return Map.of(
                "outlier_detection_experimental",
                Map.of(
                        "interval", seconds(interval),
                        "baseEjectionTime", seconds(baseEjectionTime),
                        "maxEjectionTime", seconds(maxEjectionTime),
                        "maxEjectionPercentage", (double) maxEjectionPercent,
                        "successRateEjection",
                                Map.of(
                                        "stdevFactor",
                                        1900.0,
                                        "enforcementPercentage",
                                        100.0,
                                        "minimumHosts",
                                        (double) Math.max(3, minimumHosts),
                                        "requestVolume",
                                        (double) requestVolume),
                        "failurePercentageEjection",
                                Map.of(
                                        "threshold",
                                        (double) failurePercentage,
                                        "enforcementPercentage",
                                        100.0,
                                        "minimumHosts",
                                        (double) minimumHosts,
                                        "requestVolume",
                                        (double) requestVolume),
                        "childPolicy", childPolicy));
    }

    static String seconds(Duration duration) {
        return duration.toNanos() / 1e9 + "s";
    }
}
