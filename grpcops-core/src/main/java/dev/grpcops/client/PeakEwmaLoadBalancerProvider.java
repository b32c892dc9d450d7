package dev.grpcops.client;

import java.time.Duration;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ThreadLocalRandom;
import java.util.function.LongSupplier;
import java.util.function.Supplier;
import java.util.random.RandomGenerator;

/**
 * {@value #POLICY_NAME}: power of two choices over a peak-sensitive moving average of each
 * replica's latency times its calls outstanding + 1, as Linkerd and Finagle balance. A replica that
 * turns slow or stalls stops getting calls within a few of them; one that fails fast (a replica
 * failure, or shedding: see {@link CallOutcome}) is charged a penalty instead of its short latency,
 * so failing fast never looks fast. With {@code outlierDetection} it ejects replicas that fail far
 * more than their peers ({@link OutlierDetection}); client-side health checking works as with
 * {@code round_robin} ({@code healthCheckConfig}). Registered with gRPC's default registry
 * (META-INF/services).
 *
 * <p>Config: {@code {"decay": "10s", "failurePenalty": "1s", "outlierDetection": {...}}}, each
 * optional: how fast a replica's cost forgets a slow answer (a time constant), what a fast failure
 * counts as, and ejection (none when absent). {@link ServiceConfigs} builds it.
 */
public final class PeakEwmaLoadBalancerProvider extends BalancerProvider {

    public static final String POLICY_NAME = "grpcops_peak_ewma";

    /** Linkerd's and Finagle's: a slow answer is mostly forgotten after a few tens of seconds. */
    public static final Duration DEFAULT_DECAY = Duration.ofSeconds(10);
    /** A fast failure costs as much as a second-long answer. */
    public static final Duration DEFAULT_FAILURE_PENALTY = Duration.ofSeconds(1);

    /** The provider gRPC's registry loads. */
    public PeakEwmaLoadBalancerProvider() {
        this(POLICY_NAME, System::nanoTime, ThreadLocalRandom::current, null);
    }

    /** For tests: the same policy under another name, on another clock, random source and timer. */
    PeakEwmaLoadBalancerProvider(
            String policyName,
            LongSupplier nanoClock,
            Supplier<RandomGenerator> random,
            ScheduledExecutorService timer) {
        super(policyName, false, nanoClock, random, timer);
    }
}
