package dev.grpcops.client;

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
 * <p>With at most {@code compareAllUpTo} replicas in the pick, every one is compared as well, and
 * when the one the draws pick is more than twice as slow (peak-EWMA latency) as the fastest and
 * 20 ms slower, the least loaded of the fast ones is taken: with two of three replicas slow, power of two choices
 * alone sends a third of the calls to a slow one, since both drawn are slow that often (Linkerd and
 * Envoy stop at two), and a slow one beside a busy fast one wins on load once its latency has
 * decayed; replicas of about the same cost still share the calls. A replica passed over gets one
 * call a second when it has none outstanding (its probe), whose answer re-measures it, so that one
 * whose first answers were slow is back at its first fast one.
 *
 * <p>A replica that joins replicas already serving (new, or back after a second or more away: a
 * restart, a health flap; not a reconnect, nor the replicas a channel starts with) gets its first
 * call at once, then a share of the picks that ramps from 10 % of an equal share to all of it over
 * {@code slowStart} (as Envoy's {@code slow_start_config} with its {@code min_weight_percent}): never
 * none, never its full share while cold; with a single replica it makes no difference. A replica's
 * cost is never less than how long it has left a call unanswered since its last answer, so one whose
 * node went silent gets only its probe.
 *
 * <p>Config: {@code {"decay": "10s", "failurePenalty": "1s", "compareAllUpTo": 8, "slowStart": "10s",
 * "outlierDetection": {...}}}, each optional: how fast a replica's cost forgets a slow answer (a time
 * constant), what a fast failure counts as, up to how many replicas every one is compared (0: never),
 * the slow-start window (0: none), and ejection (none when absent). {@link ServiceConfigs} builds it.
 */
public final class PeakEwmaLoadBalancerProvider extends BalancerProvider {

    public static final String POLICY_NAME = "grpcops_peak_ewma";

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
