package dev.grpcops.spring.retry;

import dev.grpcops.retry.HedgeOutcome;
import dev.grpcops.retry.RetryListener;
import dev.grpcops.retry.RetryOutcome;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import java.util.EnumMap;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.DoubleSupplier;

/**
 * The retries' metrics, in Micrometer. Prometheus names: {@code grpc_budget_retries_total{outcome}}
 * (attempted, refused, throttled, pushback), {@code grpc_retry_tokens{target}} (the token bucket
 * per downstream target, at most 65) and {@code grpc_hedges_total{target,outcome}} (sent, won, lost,
 * throttled, refused) with {@code grpc_hedgeable_calls_total{target}} and the delay they follow,
 * {@code grpc_hedge_delay_seconds{target}} (NaN until enough answers are known). Counters are built once: an
 * outcome costs a look-up and an increment.
 */
final class MicrometerRetryListener implements RetryListener {

    private final MeterRegistry registry;
    private final Map<RetryOutcome, Counter> retries = new EnumMap<>(RetryOutcome.class);
    /** Per target (at most 65, bounded by the limiters' targets), per outcome. */
    private final Map<String, Counter[]> hedges = new ConcurrentHashMap<>();

    private final Map<String, Counter> hedgeable = new ConcurrentHashMap<>();

    MicrometerRetryListener(MeterRegistry registry) {
        this.registry = registry;
        for (RetryOutcome outcome : RetryOutcome.values()) {
            retries.put(
                    outcome,
                    Counter.builder("grpc.budget.retries")
                            .description("Calls that failed with UNAVAILABLE: retried (attempted) or not, and why")
                            .tag("outcome", outcome.label())
                            .register(registry));
        }
    }

    @Override
    public void outcome(String target, RetryOutcome outcome) {
        retries.get(outcome).increment();
    }

    @Override
    public void hedgeable(String target) {
        Counter calls = hedgeable.get(target);
        if (calls == null) {
            calls = hedgeable.computeIfAbsent(
                    target,
                    t -> Counter.builder("grpc.hedgeable.calls")
                            .description(
                                    "Calls per downstream target that may be hedged: what the share of hedges is of")
                            .tag("target", t)
                            .register(registry));
            hedges.computeIfAbsent(target, this::hedgeCounters); // at 0 from the first call: dashboards see the series
        }
        calls.increment();
    }

    @Override
    public void hedge(String target, HedgeOutcome outcome) {
        hedges.computeIfAbsent(target, this::hedgeCounters)[outcome.ordinal()].increment();
    }

    private Counter[] hedgeCounters(String target) {
        Counter[] counters = new Counter[HedgeOutcome.values().length];
        for (HedgeOutcome outcome : HedgeOutcome.values()) {
            counters[outcome.ordinal()] = Counter.builder("grpc.hedges")
                    .description(
                            "Hedges of idempotent calls per downstream target: sent, then won or lost; or throttled, refused")
                    .tag("target", target)
                    .tag("outcome", outcome.label())
                    .register(registry);
        }
        return counters;
    }

    @Override
    public void tokens(String target, DoubleSupplier tokens) {
        Gauge.builder("grpc.retry.tokens", tokens, DoubleSupplier::getAsDouble)
                .description("Tokens in the retry token bucket for a downstream target (extra attempts stop at half)")
                .tag("target", target)
                .strongReference(true)
                .register(registry);
    }

    @Override
    public void hedgeDelay(String target, DoubleSupplier seconds) {
        Gauge.builder("grpc.hedge.delay", seconds, DoubleSupplier::getAsDouble)
                .description(
                        "The delay after which a call to a downstream target is hedged now (NaN: too few answers known)")
                .tag("target", target)
                .baseUnit("seconds")
                .strongReference(true)
                .register(registry);
    }
}
