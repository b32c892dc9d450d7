package dev.grpcops.client;

import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ThreadLocalRandom;
import java.util.function.LongSupplier;
import java.util.function.Supplier;
import java.util.random.RandomGenerator;

/**
 * {@value #POLICY_NAME}: the ready replicas in turn, as grpc-java's {@code round_robin}, with the
 * library's outlier detection when configured ({@link OutlierDetection}: only replica failures
 * eject, never shedding or the caller's cancellations, which grpc-java's
 * {@code outlier_detection_experimental} counts as failures) and client-side health checking.
 * Same config as {@link PeakEwmaLoadBalancerProvider}; the latency settings are unused.
 */
public final class RoundRobinLoadBalancerProvider extends BalancerProvider {

    public static final String POLICY_NAME = "grpcops_round_robin";

    /** The provider gRPC's registry loads. */
    public RoundRobinLoadBalancerProvider() {
        this(POLICY_NAME, System::nanoTime, ThreadLocalRandom::current, null);
    }

    /** For tests: the same policy under another name, on another clock, random source and timer. */
    RoundRobinLoadBalancerProvider(
            String policyName,
            LongSupplier nanoClock,
            Supplier<RandomGenerator> random,
            ScheduledExecutorService timer) {
        super(policyName, true, nanoClock, random, timer);
    }
}
