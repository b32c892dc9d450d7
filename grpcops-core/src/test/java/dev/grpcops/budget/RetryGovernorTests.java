package dev.grpcops.budget;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/** SPEC §11's rules with a fake clock: the A6 token bucket, the ratio retry budget, the bounds. */
@Timeout(value = 30, unit = TimeUnit.SECONDS)
class RetryGovernorTests {

    private final AtomicLong now = new AtomicLong(TimeUnit.HOURS.toNanos(1));
    private final RetryGovernor governor = new RetryGovernor(RetryThrottling.DEFAULTS, now::get, BudgetListener.NONE);

    /** F: an attempt failed with UNAVAILABLE (−1), S: one succeeded (+0.1); retries stop at ≤ 5 of 10. */
    @ParameterizedTest(name = "{0} → {1} tokens, retry allowed: {2}")
    @CsvSource({
        "'',                  10.0, true",
        "S5,                  10.0, true",
        "F1,                   9.0, true",
        "F4,                   6.0, true",
        "F5,                   5.0, false",
        "F5 S1,                5.1, true",
        "F20,                  0.0, false",
        "F20 S50,              5.0, false",
        "F20 S51,              5.1, true",
        "F3 S200 F4,           6.0, true",
    })
    void tokenBucket(String events, double tokens, boolean allowed) {
        RetryGovernor.Target target = governor.target("stock:50061");
        for (String event : events.isBlank() ? new String[0] : events.split(" ")) {
            int times = Integer.parseInt(event.substring(1));
            for (int i = 0; i < times; i++) {
                if (event.charAt(0) == 'F') {
                    target.failed();
                } else {
                    target.succeeded();
                }
            }
        }
        assertThat(target.tokens()).isEqualTo(tokens);
        assertThat(target.tokensAllowRetry()).isEqualTo(allowed);
    }

    /** Retries of the last 10 s ≤ 10 % of its calls + 1/s × 10 s. */
    @ParameterizedTest(name = "{0} calls in the window → {1} retries")
    @CsvSource({
        "0,    10",
        "9,    10",
        "10,   11",
        "100,  20",
        "1000, 110",
    })
    void retryBudget(int calls, int retries) {
        RetryGovernor.Target target = governor.target("pricing:50062");
        for (int i = 0; i < calls; i++) {
            target.called();
        }
        int taken = 0;
        while (target.tryTakeRetry()) {
            taken++;
            assertThat(taken).isLessThanOrEqualTo(calls + 100);
        }
        assertThat(taken).isEqualTo(retries);
    }

    @Test
    void retryBudgetForgetsWhatLeftTheWindow() {
        RetryGovernor.Target target = governor.target("pricing:50062");
        for (int i = 0; i < 100; i++) {
            target.called();
        }
        int taken = takeAll(target);
        assertThat(taken).isEqualTo(20);

        now.addAndGet(Duration.ofSeconds(5).toNanos());
        assertThat(target.tryTakeRetry()).as("5 s later the retries still count").isFalse();

        now.addAndGet(Duration.ofSeconds(5).toNanos());
        assertThat(target.retriesInWindow()).as("10 s later calls and retries have left the window").isZero();
        assertThat(takeAll(target)).as("only the floor is left").isEqualTo(10);
    }

    @Test
    void retryBudgetSlidesSlotBySlot() {
        RetryGovernor.Target target = governor.target("pricing:50062");
        assertThat(takeAll(target)).isEqualTo(10); // the floor, all at t = 0
        for (int second = 1; second <= 9; second++) {
            now.addAndGet(Duration.ofSeconds(1).toNanos());
            assertThat(target.tryTakeRetry()).as("t = %d s: the floor's ten are still in the window", second).isFalse();
        }
        now.addAndGet(Duration.ofSeconds(1).toNanos());
        assertThat(takeAll(target)).as("t = 10 s: the first slot has left").isEqualTo(10);
    }

    @Test
    void aRetryNeedsBothTheBucketAndTheBudget() {
        RetryGovernor.Target target = governor.target("stock:50061");
        for (int i = 0; i < 5; i++) {
            target.failed();
        }
        assertThat(target.tryAcquireRetry()).as("bucket at half").isFalse();
        assertThat(target.retriesInWindow()).as("a refused retry takes nothing from the budget").isZero();
        target.succeeded();
        assertThat(takeAllBoth(target)).as("bucket above half: the budget's floor decides").isEqualTo(10);
    }

    @Test
    void aGovernorThatDoesNotEnforceKeepsTheBooksButAllowsEveryRetry() {
        RetryGovernor.Target target = RetryGovernor.notEnforcing(RetryThrottling.DEFAULTS, now::get, BudgetListener.NONE)
                .target("stock:50061");
        for (int i = 0; i < 100; i++) {
            target.failed();
            assertThat(target.tryAcquireRetry()).isTrue();
        }
        assertThat(target.tokens()).isZero();
    }

    @Test
    void targetsAreBoundedAndEachGaugeAnnouncedOnce() {
        Map<String, Integer> announced = new ConcurrentHashMap<>();
        RetryGovernor bounded = new RetryGovernor(RetryThrottling.DEFAULTS, now::get, new BudgetListener() {
            @Override
            public void retryTarget(String target, java.util.function.DoubleSupplier tokens) {
                announced.merge(target, 1, Integer::sum);
            }
        });
        Set<String> names = new HashSet<>();
        for (int i = 0; i < 200; i++) {
            names.add(bounded.target("host-" + i + ":1").name());
            bounded.target("host-" + i + ":1");
        }
        assertThat(names).hasSize(RetryGovernor.MAX_TARGETS + 1).contains(RetryGovernor.OVERFLOW);
        assertThat(announced.values()).containsOnly(1);
        assertThat(bounded.target(null).name()).isEqualTo(RetryGovernor.OVERFLOW);
    }

    @Test
    void unknownTargetHasItsOwnName() {
        assertThat(governor.target(null).name()).isEqualTo(RetryGovernor.UNKNOWN);
    }

    @ParameterizedTest(name = "{0}")
    @CsvSource(delimiter = '|', value = {
        "0,    0.1, 10, 10, 1 | grpcops.budget.retry.max-tokens must be 1-1000, got 0",
        "10,   0,   10, 10, 1 | grpcops.budget.retry.token-ratio must be > 0",
        "10,   0.1, -1, 10, 1 | grpcops.budget.retry.budget-percent must be 0-100, got -1.0",
        "10,   0.1, 10, 0,  1 | grpcops.budget.retry.budget-window must be 1s-1h, got PT0S",
        "10,   0.1, 10, 10, -1 | grpcops.budget.retry.min-retries-per-second must be 0-1000, got -1.0",
    })
    void throttlingIsValidatedNamingTheProperty(String values, String message) {
        List<String> v = List.of(values.split(",\\s*"));
        assertThatThrownBy(() -> new RetryThrottling(Integer.parseInt(v.get(0).trim()), Double.parseDouble(v.get(1)),
                Double.parseDouble(v.get(2)), Duration.ofSeconds(Long.parseLong(v.get(3))), Double.parseDouble(v.get(4))))
                .isInstanceOf(IllegalArgumentException.class).hasMessageStartingWith(message);
    }

    private static int takeAll(RetryGovernor.Target target) {
        int taken = 0;
        while (target.tryTakeRetry()) {
            taken++;
        }
        return taken;
    }

    private static int takeAllBoth(RetryGovernor.Target target) {
        int taken = 0;
        while (target.tryAcquireRetry()) {
            taken++;
        }
        return taken;
    }
}
