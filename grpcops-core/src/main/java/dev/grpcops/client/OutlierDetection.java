package dev.grpcops.client;

import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Objects;

/**
 * Outlier ejection in the library's balancers (gRFC A50's rules, as grpc-java's
 * {@code outlier_detection_experimental} applies them, but counting only what {@link CallOutcome}
 * calls a replica failure): every {@code interval}, a replica that failed at least
 * {@code failurePercentage} % of at least {@code requestVolume} calls, or whose success rate is
 * {@code successRateStdevFactor} standard deviations below its peers' (three replicas or more), is
 * taken out of the pick for {@code baseEjectionTime} (longer each time it happens again, up to
 * {@code maxEjectionTime}), then tried again. No ejection is made once {@code maxEjectionPercent} %
 * of the replicas is out, so the share out can pass it by one replica: 33 % keeps it at most half
 * (one of two or three, two of four to six). Shedding ({@code RESOURCE_EXHAUSTED}), the caller's
 * cancellations and deadlines, application errors and failures a replica relays from further down
 * are neither successes nor failures here: a replica that sheds is never ejected for it.
 *
 * <pre>{@code
 * OutlierDetection ejection = OutlierDetection.builder().failurePercentage(50).build();
 * }</pre>
 */
public final class OutlierDetection {

    /**
     * Tuned for a few replicas per service: judged every second on 10 calls or more, a replica
     * failing 30 % of them goes out for 10 s (up to 60 s), never more than half of them.
     */
    public static final OutlierDetection DEFAULTS = builder().build();

    private final Duration interval;
    private final Duration baseEjectionTime;
    private final Duration maxEjectionTime;
    private final int maxEjectionPercent;
    private final int failurePercentage;
    private final int minimumHosts;
    private final int requestVolume;
    private final double successRateStdevFactor;

    private OutlierDetection(Builder builder) {
        this.interval = builder.interval;
        this.baseEjectionTime = builder.baseEjectionTime;
        this.maxEjectionTime = builder.maxEjectionTime;
        this.maxEjectionPercent = builder.maxEjectionPercent;
        this.failurePercentage = builder.failurePercentage;
        this.minimumHosts = builder.minimumHosts;
        this.requestVolume = builder.requestVolume;
        this.successRateStdevFactor = builder.successRateStdevFactor;
    }

    /** The defaults ({@link #DEFAULTS}), to change what you need. */
    public static Builder builder() {
        return new Builder();
    }

    /** How often replicas are judged. */
    public Duration interval() {
        return interval;
    }

    /** How long a replica stays out the first time. */
    public Duration baseEjectionTime() {
        return baseEjectionTime;
    }

    /** The longest a replica stays out, however often it is ejected. */
    public Duration maxEjectionTime() {
        return maxEjectionTime;
    }

    /** No ejection once this % of the replicas is out. */
    public int maxEjectionPercent() {
        return maxEjectionPercent;
    }

    /** A replica failing this % of its judged calls or more is ejected. */
    public int failurePercentage() {
        return failurePercentage;
    }

    /** Replicas with enough calls needed before anyone is judged. */
    public int minimumHosts() {
        return minimumHosts;
    }

    /** Calls a replica needs in an interval to be judged. */
    public int requestVolume() {
        return requestVolume;
    }

    /** How many standard deviations below its peers' mean success rate a replica is ejected. */
    public double successRateStdevFactor() {
        return successRateStdevFactor;
    }

    /** The {@code outlierDetection} entry of the library's balancers' service config. */
    Map<String, ?> config() {
        Map<String, Object> config = new LinkedHashMap<>();
        config.put("interval", ServiceConfigs.seconds(interval));
        config.put("baseEjectionTime", ServiceConfigs.seconds(baseEjectionTime));
        config.put("maxEjectionTime", ServiceConfigs.seconds(maxEjectionTime));
        config.put("maxEjectionPercent", (double) maxEjectionPercent);
        config.put("failurePercentage", (double) failurePercentage);
        config.put("minimumHosts", (double) minimumHosts);
        config.put("requestVolume", (double) requestVolume);
        config.put("successRateStdevFactor", successRateStdevFactor);
        return config;
    }

    @Override
    public boolean equals(Object other) {
        return other instanceof OutlierDetection that && config().equals(that.config());
    }

    @Override
    public int hashCode() {
        return config().hashCode();
    }

    @Override
    public String toString() {
        return "OutlierDetection" + config();
    }

    /** These settings, to change some: {@code detection.toBuilder().failurePercentage(50).build()}. */
    public Builder toBuilder() {
        return builder()
                .interval(interval)
                .baseEjectionTime(baseEjectionTime)
                .maxEjectionTime(maxEjectionTime)
                .maxEjectionPercent(maxEjectionPercent)
                .failurePercentage(failurePercentage)
                .minimumHosts(minimumHosts)
                .requestVolume(requestVolume)
                .successRateStdevFactor(successRateStdevFactor);
    }

    /** Outlier detection's settings; each setter names the rule a bad value breaks. */
    public static final class Builder {

        private Duration interval = Duration.ofSeconds(1);
        private Duration baseEjectionTime = Duration.ofSeconds(10);
        private Duration maxEjectionTime = Duration.ofSeconds(60);
        private int maxEjectionPercent = 33;
        private int failurePercentage = 30;
        private int minimumHosts = 2;
        private int requestVolume = 10;
        private double successRateStdevFactor = 1.9;

        private Builder() {}

        /** How often replicas are judged; 1 s by default. */
        public Builder interval(Duration interval) {
            this.interval = Objects.requireNonNull(interval, "interval");
            return this;
        }

        /** How long a replica stays out the first time; 10 s by default. */
        public Builder baseEjectionTime(Duration baseEjectionTime) {
            this.baseEjectionTime = Objects.requireNonNull(baseEjectionTime, "baseEjectionTime");
            return this;
        }

        /** The longest a replica stays out; 60 s by default. */
        public Builder maxEjectionTime(Duration maxEjectionTime) {
            this.maxEjectionTime = Objects.requireNonNull(maxEjectionTime, "maxEjectionTime");
            return this;
        }

        /** No ejection once this % of the replicas is out (0-100); 33 by default: at most half. */
        public Builder maxEjectionPercent(int maxEjectionPercent) {
            this.maxEjectionPercent = maxEjectionPercent;
            return this;
        }

        /** A replica failing this % of its judged calls (0-100) is ejected; 30 by default. */
        public Builder failurePercentage(int failurePercentage) {
            this.failurePercentage = failurePercentage;
            return this;
        }

        /** Replicas with enough calls needed before anyone is judged (at least 1); 2 by default. */
        public Builder minimumHosts(int minimumHosts) {
            this.minimumHosts = minimumHosts;
            return this;
        }

        /** Judged calls a replica needs in an interval to be judged (at least 1); 10 by default. */
        public Builder requestVolume(int requestVolume) {
            this.requestVolume = requestVolume;
            return this;
        }

        /** Standard deviations below the mean success rate that eject (positive); 1.9 by default. */
        public Builder successRateStdevFactor(double successRateStdevFactor) {
            this.successRateStdevFactor = successRateStdevFactor;
            return this;
        }

        /** @throws IllegalArgumentException naming the setting a value breaks */
        public OutlierDetection build() {
            if (interval.isNegative() || interval.isZero()) {
                throw new IllegalArgumentException("outlier detection: interval must be positive, got " + interval);
            }
            if (baseEjectionTime.isNegative() || baseEjectionTime.isZero()) {
                throw new IllegalArgumentException(
                        "outlier detection: base-ejection-time must be positive, got " + baseEjectionTime);
            }
            if (maxEjectionTime.compareTo(baseEjectionTime) < 0) {
                throw new IllegalArgumentException("outlier detection: max-ejection-time must be at least"
                        + " base-ejection-time (" + baseEjectionTime + "), got " + maxEjectionTime);
            }
            if (maxEjectionPercent < 0 || maxEjectionPercent > 100) {
                throw new IllegalArgumentException(
                        "outlier detection: max-ejection-percent must be 0-100, got " + maxEjectionPercent);
            }
            if (failurePercentage < 0 || failurePercentage > 100) {
                throw new IllegalArgumentException(
                        "outlier detection: failure-percentage must be 0-100, got " + failurePercentage);
            }
            if (minimumHosts < 1) {
                throw new IllegalArgumentException(
                        "outlier detection: minimum-hosts must be at least 1, got " + minimumHosts);
            }
            if (requestVolume < 1) {
                throw new IllegalArgumentException(
                        "outlier detection: request-volume must be at least 1, got " + requestVolume);
            }
            if (!(successRateStdevFactor > 0)) {
                throw new IllegalArgumentException(
                        "outlier detection: success-rate-stdev-factor must be positive, got " + successRateStdevFactor);
            }
            return new OutlierDetection(this);
        }
    }
}
