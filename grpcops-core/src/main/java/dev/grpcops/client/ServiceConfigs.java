package dev.grpcops.client;

import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;

/**
 * gRPC service configs (as maps, the form {@code ManagedChannelBuilder.defaultServiceConfig} takes).
 *
 * <pre>{@code
 * channel.defaultServiceConfig(ServiceConfigs.builder().healthCheck("chain.v1.Stock").build());
 * // peak-EWMA balancing under outlier detection, health-checked
 * }</pre>
 */
public final class ServiceConfigs {

    private ServiceConfigs() {}

    /** grpc-java's own round_robin over every resolved address: {@code {"loadBalancingConfig": [{"round_robin": {}}]}}. */
    public static Map<String, ?> roundRobin() {
        return Map.of("loadBalancingConfig", List.of(Map.of("round_robin", Map.of())));
    }

    /** grpc-java's round_robin, skipping addresses whose health for {@code serviceName} is not SERVING. */
    public static Map<String, ?> healthCheckedRoundRobin(String serviceName) {
        return Map.of(
                "loadBalancingConfig",
                List.of(Map.of("round_robin", Map.of())),
                "healthCheckConfig",
                Map.of("serviceName", serviceName));
    }

    /** Peak-EWMA balancing under {@link OutlierDetection#DEFAULTS}, no health checking: change what you need. */
    public static Builder builder() {
        return new Builder();
    }

    /** How a channel picks among the replicas. */
    public enum Balancing {
        /** {@link PeakEwmaLoadBalancerProvider}: by latency and load, failures charged. */
        PEAK_EWMA,
        /** {@link RoundRobinLoadBalancerProvider}: in turn, as grpc-java's round_robin. */
        ROUND_ROBIN
    }

    /** A service-config duration: seconds with an {@code s}. */
    static String seconds(Duration duration) {
        return duration.toNanos() / 1e9 + "s";
    }

    /** One channel's balancing, outlier detection and health checking. */
    public static final class Builder {

        private Balancing balancing = Balancing.PEAK_EWMA;
        // The balancer's own defaults (PeakEwmaLoadBalancer.Config.DEFAULTS), written once there.
        private Duration decay = PeakEwmaLoadBalancer.Config.DEFAULTS.decay();
        private Duration failurePenalty = PeakEwmaLoadBalancer.Config.DEFAULTS.failurePenalty();
        private int compareAllUpTo = PeakEwmaLoadBalancer.Config.DEFAULTS.compareAllUpTo();
        private Duration slowStart = PeakEwmaLoadBalancer.Config.DEFAULTS.slowStart();
        private OutlierDetection outlierDetection = OutlierDetection.DEFAULTS;
        private String healthCheckedService;

        private Builder() {}

        public Builder balancing(Balancing balancing) {
            this.balancing = Objects.requireNonNull(balancing, "balancing");
            return this;
        }

        /** Peak-EWMA: how fast a replica's cost forgets a slow answer (time constant); 10 s by default. */
        public Builder decay(Duration decay) {
            this.decay = Objects.requireNonNull(decay, "decay");
            return this;
        }

        /** Peak-EWMA: what a fast failure (UNAVAILABLE, RESOURCE_EXHAUSTED) counts as; 1 s by default. */
        public Builder failurePenalty(Duration failurePenalty) {
            this.failurePenalty = Objects.requireNonNull(failurePenalty, "failurePenalty");
            return this;
        }

        /**
         * Peak-EWMA: up to how many replicas in the pick every one is compared, besides the two drawn
         * (0: never); 8 by default.
         */
        public Builder compareAllUpTo(int compareAllUpTo) {
            if (compareAllUpTo < 0) {
                throw new IllegalArgumentException("compareAllUpTo must not be negative, got " + compareAllUpTo);
            }
            this.compareAllUpTo = compareAllUpTo;
            return this;
        }

        /**
         * Peak-EWMA: over how long a replica that becomes ready ramps up from 10 % of an equal share
         * of the picks to all of it, its first call at once (zero: at once); 10 s by default.
         */
        public Builder slowStart(Duration slowStart) {
            if (slowStart.isNegative()) {
                throw new IllegalArgumentException("slowStart must not be negative, got " + slowStart);
            }
            this.slowStart = slowStart;
            return this;
        }

        /** Ejection of replicas that fail far more than their peers; null for none. */
        public Builder outlierDetection(OutlierDetection outlierDetection) {
            this.outlierDetection = outlierDetection;
            return this;
        }

        /** Skip replicas whose health for {@code serviceName} is not SERVING (client-side health checking). */
        public Builder healthCheck(String serviceName) {
            this.healthCheckedService = serviceName;
            return this;
        }

        public Map<String, ?> build() {
            Map<String, Object> settings = new LinkedHashMap<>();
            settings.put("decay", seconds(decay));
            settings.put("failurePenalty", seconds(failurePenalty));
            settings.put("compareAllUpTo", (double) compareAllUpTo); // service configs hold JSON numbers
            settings.put("slowStart", seconds(slowStart));
            if (outlierDetection != null) {
                settings.put("outlierDetection", outlierDetection.config());
            }
            String policy = balancing == Balancing.ROUND_ROBIN
                    ? RoundRobinLoadBalancerProvider.POLICY_NAME
                    : PeakEwmaLoadBalancerProvider.POLICY_NAME;
            Map<String, Object> config = new LinkedHashMap<>();
            config.put("loadBalancingConfig", List.of(Map.of(policy, settings)));
            if (healthCheckedService != null) {
                config.put("healthCheckConfig", Map.of("serviceName", healthCheckedService));
            }
            return Map.copyOf(config);
        }
    }
}
