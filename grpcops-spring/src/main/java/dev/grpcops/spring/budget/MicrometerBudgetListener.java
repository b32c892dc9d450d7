package dev.grpcops.spring.budget;

import dev.grpcops.budget.Budget;
import dev.grpcops.budget.BudgetListener;
import dev.grpcops.budget.LedgerLine;
import dev.grpcops.tracing.CallTags;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import java.time.Duration;
import java.util.Arrays;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

/**
 * The budget's own metrics, in Micrometer. Prometheus names:
 * {@code grpc_budget_remaining_seconds}, {@code grpc_budget_downstream_seconds}, {@code grpc_budget_slack_seconds},
 * {@code grpc_budget_answered_late_total},
 * {@code grpc_budget_default_applied_total} and {@code grpc_budget_insufficient_total}. Each meter is built once, on first use, and reused:
 * a call costs map look-ups and the recording itself. Method tags come from the server's own
 * method descriptors and the channels' calls, so they are bounded by what the service serves and calls.
 */
final class MicrometerBudgetListener implements BudgetListener {

    /** Histogram buckets, in seconds: around the budget rules' numbers and the usual client deadlines. */
    private static final Duration[] BUCKETS = {
        Duration.ofMillis(50), Duration.ofMillis(100), Duration.ofMillis(200), Duration.ofMillis(300),
        Duration.ofMillis(500), Duration.ofMillis(700), Duration.ofMillis(800), Duration.ofSeconds(1),
        Duration.ofMillis(1500), Duration.ofSeconds(2), Duration.ofSeconds(3), Duration.ofSeconds(5),
        Duration.ofSeconds(10), Duration.ofSeconds(30),
    };

    /** Slack buckets: the same, and finer near zero, where a hop that spends nearly all of its budget shows. */
    private static final Duration[] SLACK_BUCKETS = Stream.concat(
                    Stream.of(Duration.ofMillis(5), Duration.ofMillis(10), Duration.ofMillis(25)),
                    Arrays.stream(BUCKETS))
            .toArray(Duration[]::new);

    private final MeterRegistry registry;
    private final Map<String, Timer> remaining = new ConcurrentHashMap<>();
    private final Map<String, Counter> defaulted = new ConcurrentHashMap<>();
    private final Map<String, Timer> downstream = new ConcurrentHashMap<>();
    private final Map<String, Counter> notSent = new ConcurrentHashMap<>();
    private final Map<String, Timer> slack = new ConcurrentHashMap<>();
    private final Map<String, Counter> late = new ConcurrentHashMap<>();

    MicrometerBudgetListener(MeterRegistry registry) {
        this.registry = registry;
    }

    @Override
    public void arrived(String method, Budget budget) {
        remaining
                .computeIfAbsent(
                        method, m -> histogram("grpc.budget.remaining", "Budget of a served call on arrival", m))
                .record(Math.max(0, budget.remainingNanos()), TimeUnit.NANOSECONDS);
        if (budget.defaulted()) {
            defaulted
                    .computeIfAbsent(
                            method,
                            m -> Counter.builder("grpc.budget.default.applied")
                                    .description(
                                            "Served calls that arrived without a deadline and got the default budget")
                                    .tag("method", m)
                                    .register(registry))
                    .increment();
        }
    }

    @Override
    public void handedDownstream(String method, Duration deadline) {
        handedDownstreamNanos(method, deadline.toNanos());
    }

    @Override
    public void handedDownstreamNanos(String method, long deadlineNanos) {
        downstream
                .computeIfAbsent(
                        method, m -> histogram("grpc.budget.downstream", "Deadline handed to a downstream call", m))
                .record(Math.max(0, deadlineNanos), TimeUnit.NANOSECONDS);
    }

    @Override
    public void answered(String method, LedgerLine line) {
        slack.computeIfAbsent(
                        method,
                        m -> histogram(
                                "grpc.budget.slack",
                                "Budget left when a served call was answered (0 when it was answered late)",
                                m,
                                SLACK_BUCKETS))
                .record(Math.max(0, line.slackNanos()), TimeUnit.NANOSECONDS);
        if (line.slackNanos() < 0) {
            late.computeIfAbsent(
                            method,
                            m -> Counter.builder("grpc.budget.answered.late")
                                    .description("Served calls answered after their budget's deadline")
                                    .tag("method", m)
                                    .register(registry))
                    .increment();
        }
    }

    @Override
    public void notSent(String method) {
        notSent.computeIfAbsent(
                        method,
                        m -> Counter.builder("grpc.budget.insufficient")
                                .description(
                                        "Downstream calls not sent because the budget left was below min-downstream")
                                .tag("method", m)
                                .register(registry))
                .increment();
        CallTags.tag("grpcops.budget.not_sent", method);
    }

    private Timer histogram(String name, String description, String method) {
        return histogram(name, description, method, BUCKETS);
    }

    private Timer histogram(String name, String description, String method, Duration[] buckets) {
        return Timer.builder(name)
                .description(description)
                .tag("method", method)
                .serviceLevelObjectives(buckets)
                .register(registry);
    }
}
