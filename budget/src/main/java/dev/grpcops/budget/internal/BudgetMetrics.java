package dev.grpcops.budget.internal;

import dev.grpcops.budget.Budget;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import java.time.Duration;

/**
 * The budget's own metrics (SPEC §8). Prometheus names: {@code grpc_budget_remaining_seconds},
 * {@code grpc_budget_downstream_seconds}, {@code grpc_budget_default_applied_total},
 * {@code grpc_budget_insufficient_total}, {@code grpc_budget_retries_total{outcome}}.
 */
public final class BudgetMetrics {

    /** Histogram buckets, in seconds: around the SPEC §4 numbers and the usual client deadlines. */
    private static final Duration[] BUCKETS = {
        Duration.ofMillis(50), Duration.ofMillis(100), Duration.ofMillis(200), Duration.ofMillis(300),
        Duration.ofMillis(500), Duration.ofMillis(700), Duration.ofMillis(800), Duration.ofSeconds(1),
        Duration.ofMillis(1500), Duration.ofSeconds(2), Duration.ofSeconds(3), Duration.ofSeconds(5),
        Duration.ofSeconds(10), Duration.ofSeconds(30),
    };

    private final MeterRegistry registry;
    private final Counter retriesAttempted;
    private final Counter retriesRefused;

    public BudgetMetrics(MeterRegistry registry) {
        this.registry = registry;
        this.retriesAttempted = retries("attempted");
        this.retriesRefused = retries("refused");
    }

    /** A served call arrived with this budget. */
    public void arrived(String method, Budget budget) {
        histogram("grpc.budget.remaining", "Budget of a served call on arrival", method)
                .record(atLeastZero(budget.remaining()));
        if (budget.defaulted()) {
            Counter.builder("grpc.budget.default.applied")
                    .description("Served calls that arrived without a deadline and got the default budget")
                    .tag("method", method)
                    .register(registry)
                    .increment();
        }
    }

    /** A downstream call to {@code method} was sent with this deadline. */
    public void handedDownstream(String method, Duration deadline) {
        histogram("grpc.budget.downstream", "Deadline handed to a downstream call", method)
                .record(atLeastZero(deadline));
    }

    /** A downstream call to {@code method} was not sent: the budget could not cover it. */
    public void notSent(String method) {
        Counter.builder("grpc.budget.insufficient")
                .description("Downstream calls not sent because the budget left was below min-downstream")
                .tag("method", method)
                .register(registry)
                .increment();
    }

    /** A retry was attempted ({@code true}) or refused for lack of budget. */
    public void retry(boolean attempted) {
        (attempted ? retriesAttempted : retriesRefused).increment();
    }

    private Counter retries(String outcome) {
        return Counter.builder("grpc.budget.retries")
                .description("Retries of calls that failed with UNAVAILABLE, attempted or refused for lack of budget")
                .tag("outcome", outcome)
                .register(registry);
    }

    private Timer histogram(String name, String description, String method) {
        return Timer.builder(name)
                .description(description)
                .tag("method", method)
                .serviceLevelObjectives(BUCKETS)
                .register(registry);
    }

    private static Duration atLeastZero(Duration duration) {
        return duration.isNegative() ? Duration.ZERO : duration;
    }
}
