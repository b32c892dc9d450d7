package dev.grpcops.client;

import io.grpc.LoadBalancer;
import io.grpc.LoadBalancerProvider;
import io.grpc.NameResolver;
import io.grpc.Status;
import io.grpc.protobuf.services.HealthCheckingLoadBalancerUtil;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.ThreadLocalRandom;
import java.util.function.LongSupplier;
import java.util.function.Supplier;
import java.util.random.RandomGenerator;

/**
 * {@value #POLICY_NAME}: power of two choices over a peak-sensitive moving average of each
 * replica's latency times its calls outstanding + 1, as Linkerd and Finagle balance. A replica that
 * turns slow or stalls stops getting calls within a few of them; one that fails fast
 * ({@code UNAVAILABLE}, {@code RESOURCE_EXHAUSTED}) is charged a penalty instead of its short latency,
 * so failing fast never looks fast. Client-side health checking works as with {@code round_robin}
 * ({@code healthCheckConfig}), and it may sit under {@code outlier_detection_experimental}.
 * Registered with gRPC's default registry (META-INF/services).
 *
 * <p>Config: {@code {"decay": "10s", "failurePenalty": "1s"}}, both optional: how fast a replica's
 * cost forgets a slow answer (a time constant), and what a fast failure counts as.
 */
public final class PeakEwmaLoadBalancerProvider extends LoadBalancerProvider {

    public static final String POLICY_NAME = "grpcops_peak_ewma";

    /** Linkerd's and Finagle's: a slow answer is mostly forgotten after a few tens of seconds. */
    static final Duration DEFAULT_DECAY = Duration.ofSeconds(10);
    /** A fast failure costs as much as a second-long answer. */
    static final Duration DEFAULT_FAILURE_PENALTY = Duration.ofSeconds(1);

    private final String policyName;
    private final LongSupplier nanoClock;
    private final Supplier<RandomGenerator> random;

    /** The provider gRPC's registry loads. */
    public PeakEwmaLoadBalancerProvider() {
        this(POLICY_NAME, System::nanoTime, ThreadLocalRandom::current);
    }

    /** For tests: the same policy under another name, on another clock, drawing from another source. */
    PeakEwmaLoadBalancerProvider(String policyName, LongSupplier nanoClock, Supplier<RandomGenerator> random) {
        this.policyName = policyName;
        this.nanoClock = nanoClock;
        this.random = random;
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
        // As grpc-services does for round_robin: health checking wraps the policy.
        return HealthCheckingLoadBalancerUtil.newHealthCheckingLoadBalancer(
                new LoadBalancer.Factory() {
                    @Override
                    public LoadBalancer newLoadBalancer(LoadBalancer.Helper child) {
                        return new PeakEwmaLoadBalancer(child, nanoClock, random);
                    }
                },
                helper);
    }

    @Override
    public NameResolver.ConfigOrError parseLoadBalancingPolicyConfig(Map<String, ?> raw) {
        try {
            Duration decay = duration(raw, "decay", DEFAULT_DECAY);
            Duration penalty = duration(raw, "failurePenalty", DEFAULT_FAILURE_PENALTY);
            if (decay.isZero() || decay.isNegative()) {
                throw new IllegalArgumentException("decay must be positive, got " + raw.get("decay"));
            }
            if (penalty.isNegative()) {
                throw new IllegalArgumentException(
                        "failurePenalty must not be negative, got " + raw.get("failurePenalty"));
            }
            return NameResolver.ConfigOrError.fromConfig(
                    new PeakEwmaLoadBalancer.Config(decay.toNanos(), penalty.toNanos()));
        } catch (RuntimeException e) {
            return NameResolver.ConfigOrError.fromError(Status.INVALID_ARGUMENT
                    .withDescription(POLICY_NAME + ": " + e.getMessage())
                    .withCause(e));
        }
    }

    /** A service-config duration: a string of seconds with an {@code s}, as {@code "10s"} or {@code "0.25s"}. */
    static Duration duration(Map<String, ?> raw, String key, Duration absent) {
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
