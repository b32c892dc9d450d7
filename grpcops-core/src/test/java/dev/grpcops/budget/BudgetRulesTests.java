package dev.grpcops.budget;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.grpcops.testing.FakeClock;
import io.grpc.Deadline;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

class BudgetRulesTests {

    private final BudgetRules rules = BudgetRules.DEFAULTS;

    private final FakeClock clock = new FakeClock();

    @ParameterizedTest(name = "caller deadline {0} s -> budget {1} s, default {2}")
    @CsvSource(
            nullValues = "none",
            value = {
                "1.0,        1.0, false",
                "0.45,       0.45, false",
                "none,       2.0, true",
                "1000000,    1000000, false",
                "1000000.001, 2.0, true",
                "0,          0, false",
            })
    void arrivalBudgetIsTheCallerDeadlineOrTheDefault(Double callerSeconds, double budgetSeconds, boolean defaulted) {
        Duration caller = callerSeconds == null ? null : seconds(callerSeconds);
        assertThat(rules.usesDefault(caller)).isEqualTo(defaulted);
        if (caller != null) {
            assertThat(rules.usesDefault(caller.toNanos())).isEqualTo(defaulted);
        }
        // On a clock that stands still: 1000000.001 s is a millisecond over the limit, less than a
        // loaded machine can take between making the deadline and reading it on a real one.
        Deadline deadline =
                caller == null ? null : Deadline.after(caller.toNanos(), TimeUnit.NANOSECONDS, clock.ticker());
        assertThat(Budget.arrived(deadline, rules).remaining())
                .isBetween(seconds(budgetSeconds).minusMillis(100), seconds(budgetSeconds));
        assertThat(Budget.arrived(deadline, rules).defaulted()).isEqualTo(defaulted);
    }

    @ParameterizedTest(name = "remaining {0} s -> downstream {1} s, call {2}, retry {3}")
    @CsvSource({
        // design §4: Quote with 1 s -> Stock gets 0.8 s; no deadline -> 1.8 s
        "1.0,   0.8,   true,  true",
        "2.0,   1.8,   true,  true",
        // design §4: 0.45 s leaves 0.25 s < 0.3 s: not sent
        "0.45,  0.25,  false, false",
        // the edges: exactly min-downstream is sent, exactly retry-min is retried
        "0.5,   0.3,   true,  false",
        "0.499, 0.299, false, false",
        "0.9,   0.7,   true,  true",
        "0.899, 0.699, true,  false",
        // design §5: flaky at 1.5 s retries, at 0.8 s does not
        "1.49,  1.29,  true,  true",
        "0.79,  0.59,  true,  false",
        "0.1,   -0.1,  false, false",
    })
    void downstreamCallAndRetryRules(double remaining, double downstream, boolean call, boolean retry) {
        assertThat(rules.downstream(seconds(remaining))).isEqualTo(seconds(downstream));
        assertThat(rules.allowsCall(seconds(remaining))).isEqualTo(call);
        assertThat(rules.allowsRetry(seconds(remaining))).isEqualTo(retry);
    }

    @Test
    void fourHopsOfSpecSection4() {
        // Checkout 1.2 s -> Pricing gets 1.0 s -> Stock gets 0.8 s
        Duration pricing = rules.downstream(seconds(1.2));
        assertThat(rules.downstream(pricing)).isEqualTo(seconds(0.8));
    }

    @Test
    void refusesNonsenseNamingTheRule() {
        assertThatThrownBy(() ->
                        BudgetRules.builder().reserve(Duration.ofMillis(-1)).build())
                .isInstanceOf(InvalidBudgetRulesException.class)
                .hasMessage("reserve must not be negative, got PT-0.001S")
                .extracting(e -> ((InvalidBudgetRulesException) e).field())
                .isEqualTo("reserve");
        assertThatThrownBy(
                        () -> BudgetRules.builder().defaultBudget(Duration.ZERO).build())
                .isInstanceOf(InvalidBudgetRulesException.class)
                .hasMessageStartingWith("default-budget must be positive");
        assertThatThrownBy(() -> BudgetRules.builder().retryMin(null).build())
                .isInstanceOf(InvalidBudgetRulesException.class)
                .hasMessage("retry-min must be set");
    }

    @Test
    void theBuildersDefaultsAreTheDefaults() {
        assertThat(BudgetRules.builder().build()).isEqualTo(BudgetRules.DEFAULTS);
        assertThat(BudgetRules.DEFAULTS.reserve()).isEqualTo(Duration.ofMillis(200));
        assertThat(BudgetRules.DEFAULTS.defaultBudget()).isEqualTo(Duration.ofSeconds(2));
        assertThat(BudgetRules.DEFAULTS.minDownstream()).isEqualTo(Duration.ofMillis(300));
        assertThat(BudgetRules.DEFAULTS.retryMin()).isEqualTo(Duration.ofMillis(700));
    }

    private static Duration seconds(double seconds) {
        return Duration.ofNanos(Math.round(seconds * 1e9));
    }
}
