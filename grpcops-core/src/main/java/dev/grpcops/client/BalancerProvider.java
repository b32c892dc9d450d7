package dev.grpcops.client;

import io.grpc.LoadBalancer;
import io.grpc.LoadBalancerProvider;
import io.grpc.NameResolver;
import io.grpc.Status;
import io.grpc.protobuf.services.HealthCheckingLoadBalancerUtil;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.ScheduledExecutorService;
import java.util.function.LongSupplier;
import java.util.function.Supplier;
import java.util.random.RandomGenerator;

/**
 * What the library's two balancers share: {@link PeakEwmaLoadBalancer} under client-side health
 * checking (as grpc-services does for round_robin), its config parsed with a message that names the
 * field, and the clock, random source and timer it runs on (the system's, or a test's).
 */
abstract class BalancerProvider extends LoadBalancerProvider {

    private final String policyName;
    private final boolean roundRobin;
    private final LongSupplier nanoClock;
    private final Supplier<RandomGenerator> random;
    private final ScheduledExecutorService timer;

    /**
     * @param timer where outlier detection's interval runs; null for the channel's own timer
     */
    BalancerProvider(
            String policyName,
            boolean roundRobin,
            LongSupplier nanoClock,
            Supplier<RandomGenerator> random,
            ScheduledExecutorService timer) {
        this.policyName = policyName;
        this.roundRobin = roundRobin;
        this.nanoClock = nanoClock;
        this.random = random;
        this.timer = timer;
    }

    @Override
    public boolean isAvailable() {
        return true;
    }

    @Override
    public int getPriority() {
        return 5;
    }

    @Override
    public String getPolicyName() {
        return policyName;
    }

    @Override
    public LoadBalancer newLoadBalancer(LoadBalancer.Helper helper) {
        return HealthCheckingLoadBalancerUtil.newHealthCheckingLoadBalancer(
                new LoadBalancer.Factory() {
                    @Override
                    public LoadBalancer newLoadBalancer(LoadBalancer.Helper child) {
                        return new PeakEwmaLoadBalancer(child, nanoClock, random, roundRobin, timer);
                    }
                },
                helper);
    }

    @Override
    public NameResolver.ConfigOrError parseLoadBalancingPolicyConfig(Map<String, ?> raw) {
        try {
            Duration decay = duration(raw, "decay", PeakEwmaLoadBalancer.Config.DEFAULTS.decay());
            Duration penalty = duration(raw, "failurePenalty", PeakEwmaLoadBalancer.Config.DEFAULTS.failurePenalty());
            if (decay.isZero() || decay.isNegative()) {
                throw new IllegalArgumentException("decay must be positive, got " + raw.get("decay"));
            }
            if (penalty.isNegative()) {
                throw new IllegalArgumentException(
                        "failurePenalty must not be negative, got " + raw.get("failurePenalty"));
            }
            Object ejection = raw == null ? null : raw.get("outlierDetection");
            if (ejection != null && !(ejection instanceof Map<?, ?>)) {
                throw new IllegalArgumentException("outlierDetection must be an object, got " + ejection);
            }
            int compareAllUpTo = compareAllUpTo(raw);
            Duration slowStart = duration(raw, "slowStart", PeakEwmaLoadBalancer.Config.DEFAULTS.slowStart());
            if (slowStart.isNegative()) {
                throw new IllegalArgumentException("slowStart must not be negative, got " + raw.get("slowStart"));
            }
            return NameResolver.ConfigOrError.fromConfig(new PeakEwmaLoadBalancer.Config(
                    decay.toNanos(),
                    penalty.toNanos(),
                    ejection == null ? null : outlierDetection((Map<?, ?>) ejection),
                    compareAllUpTo,
                    slowStart.toNanos()));
        } catch (RuntimeException e) {
            return NameResolver.ConfigOrError.fromError(Status.INVALID_ARGUMENT
                    .withDescription(policyName + ": " + e.getMessage())
                    .withCause(e));
        }
    }

    private static int compareAllUpTo(Map<?, ?> raw) {
        Object value = raw == null ? null : raw.get("compareAllUpTo");
        if (value == null) {
            return PeakEwmaLoadBalancer.Config.DEFAULTS.compareAllUpTo();
        }
        if (!(value instanceof Number number)
                || number.doubleValue() < 0
                || number.doubleValue() != Math.rint(number.doubleValue())) {
            throw new IllegalArgumentException("compareAllUpTo must be a whole number, 0 or more, got " + value);
        }
        return (int) Math.min(Integer.MAX_VALUE, number.longValue());
    }

    private static OutlierDetection outlierDetection(Map<?, ?> raw) {
        OutlierDetection defaults = OutlierDetection.DEFAULTS;
        return OutlierDetection.builder()
                .interval(duration(raw, "interval", defaults.interval()))
                .baseEjectionTime(duration(raw, "baseEjectionTime", defaults.baseEjectionTime()))
                .maxEjectionTime(duration(raw, "maxEjectionTime", defaults.maxEjectionTime()))
                .maxEjectionPercent((int) number(raw, "maxEjectionPercent", defaults.maxEjectionPercent()))
                .failurePercentage((int) number(raw, "failurePercentage", defaults.failurePercentage()))
                .minimumHosts((int) number(raw, "minimumHosts", defaults.minimumHosts()))
                .requestVolume((int) number(raw, "requestVolume", defaults.requestVolume()))
                .successRateStdevFactor(number(raw, "successRateStdevFactor", defaults.successRateStdevFactor()))
                .build();
    }

    private static double number(Map<?, ?> raw, String key, double absent) {
        Object value = raw.get(key);
        if (value == null) {
            return absent;
        }
        if (!(value instanceof Number number)) {
            throw new IllegalArgumentException("outlierDetection." + key + " must be a number, got " + value);
        }
        return number.doubleValue();
    }

    /** A service-config duration: a string of seconds with an {@code s}, as {@code "10s"} or {@code "0.25s"}. */
    static Duration duration(Map<?, ?> raw, String key, Duration absent) {
        Object value = raw == null ? null : raw.get(key);
        if (value == null) {
            return absent;
        }
        String text = value.toString().trim();
        if (!text.endsWith("s")) {
            throw new IllegalArgumentException(key + " must be seconds like \"10s\" or \"0.25s\", got " + value);
        }
        try {
            return Duration.ofNanos(Math.round(Double.parseDouble(text.substring(0, text.length() - 1)) * 1e9));
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException(key + " must be seconds like \"10s\" or \"0.25s\", got " + value);
        }
    }
}
