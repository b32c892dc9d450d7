package dev.grpcops.spring.budget;

import static org.assertj.core.api.Assertions.assertThat;

import com.sun.management.ThreadMXBean;
import dev.grpcops.budget.Budget;
import dev.grpcops.budget.BudgetRules;
import dev.grpcops.budget.LedgerLine;
import io.grpc.Deadline;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.lang.management.ManagementFactory;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

class MicrometerBudgetListenerTests {

    private static final String QUOTE = "chain.v1.Pricing/Quote";
    private static final String CHECK = "chain.v1.Stock/Check";

    private final SimpleMeterRegistry registry = new SimpleMeterRegistry();
    private final MicrometerBudgetListener listener = new MicrometerBudgetListener(registry);

    @Test
    void recordsTheBudgetMetricsUnderTheirNames() {
        listener.arrived(QUOTE, Budget.arrived(Deadline.after(1, TimeUnit.SECONDS), BudgetRules.DEFAULTS));
        listener.arrived(QUOTE, Budget.arrived(null, BudgetRules.DEFAULTS));
        listener.handedDownstream(CHECK, Duration.ofMillis(800));
        listener.notSent(CHECK);

        assertThat(registry.get("grpc.budget.remaining")
                        .tag("method", QUOTE)
                        .timer()
                        .count())
                .isEqualTo(2);
        assertThat(registry.get("grpc.budget.default.applied")
                        .tag("method", QUOTE)
                        .counter()
                        .count())
                .isEqualTo(1);
        assertThat(registry.get("grpc.budget.downstream")
                        .tag("method", CHECK)
                        .timer()
                        .max(TimeUnit.MILLISECONDS))
                .isEqualTo(800);
        assertThat(registry.get("grpc.budget.insufficient")
                        .tag("method", CHECK)
                        .counter()
                        .count())
                .isEqualTo(1);
    }

    /** The slack at each answer, per method; an answer after the deadline counts as 0 slack and as late. */
    @Test
    void recordsTheSlackAtEachAnswerAndCountsTheLateOnes() {
        listener.answered(QUOTE, line(Duration.ofMillis(120)));
        listener.answered(QUOTE, line(Duration.ofMillis(-30)));
        listener.answered(CHECK, line(Duration.ofMillis(5)));

        assertThat(registry.get("grpc.budget.slack")
                        .tag("method", QUOTE)
                        .timer()
                        .count())
                .isEqualTo(2);
        assertThat(registry.get("grpc.budget.slack")
                        .tag("method", QUOTE)
                        .timer()
                        .max(TimeUnit.MILLISECONDS))
                .isEqualTo(120);
        assertThat(registry.get("grpc.budget.slack")
                        .tag("method", QUOTE)
                        .timer()
                        .totalTime(TimeUnit.MILLISECONDS))
                .as("the late answer's slack recorded as 0, not -30 ms")
                .isEqualTo(120);
        assertThat(registry.get("grpc.budget.answered.late")
                        .tag("method", QUOTE)
                        .counter()
                        .count())
                .isEqualTo(1);
        assertThat(registry.find("grpc.budget.answered.late")
                        .tag("method", CHECK)
                        .counter())
                .as("no late answer, no counter")
                .isNull();
    }

    private static LedgerLine line(Duration slack) {
        return LedgerLine.builder("hop")
                .received(Duration.ofMillis(900))
                .queued(Duration.ZERO)
                .handler(Duration.ofMillis(10))
                .granted(Duration.ofMillis(700))
                .slack(slack)
                .build();
    }

    /**
     * Meters are built once and reused: building one per call (builder, tags, id, registry look-up)
     * allocates hundreds of bytes each time, which is what a hot path must not do.
     */
    @Test
    void aCallAfterTheFirstBuildsNoMeters() {
        Budget budget = Budget.arrived(null, BudgetRules.DEFAULTS);
        Runnable oneCall = () -> {
            listener.arrived(QUOTE, budget);
            listener.handedDownstream(CHECK, Duration.ofMillis(800));
            listener.notSent(CHECK);
        };
        for (int i = 0; i < 20_000; i++) {
            oneCall.run(); // warm up: meters built, JIT done
        }
        int meters = registry.getMeters().size();
        ThreadMXBean threads = (ThreadMXBean) ManagementFactory.getThreadMXBean();
        long before = threads.getCurrentThreadAllocatedBytes();
        int calls = 10_000;
        for (int i = 0; i < calls; i++) {
            oneCall.run();
        }
        long perCall = (threads.getCurrentThreadAllocatedBytes() - before) / calls;
        // Budget.remaining() makes a Duration or two (~48 B); meters built per call cost ~1 KB.
        assertThat(perCall).as("bytes allocated per call").isLessThan(200);
        assertThat(registry.getMeters()).hasSize(meters);
    }
}
