package dev.grpcops.retry;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.grpcops.testing.FakeClock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/** The limiters' rules with a fake clock: the A6 token bucket, the ratio retry budget, both together, the bounds. */
@Timeout(value = 30, unit = TimeUnit.SECONDS)
class RetryLimiterTests {

    private static final String STOCK = "stock:50061";

    private final FakeClock clock = new FakeClock();
    private final TokenBucket bucket = TokenBucket.builder().build();
    private final RetryBudget budget =
            RetryBudget.builder().nanoClock(clock.nanoClock()).build();

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
        for (String event : events.isBlank() ? new String[0] : events.split(" ")) {
            int times = Integer.parseInt(event.substring(1));
            for (int i = 0; i < times; i++) {
                if (event.charAt(0) == 'F') {
                    bucket.onFailure(STOCK);
                } else {
                    bucket.onSuccess(STOCK);
                }
            }
        }
        assertThat(bucket.tokens(STOCK)).isEqualTo(tokens);
        assertThat(bucket.tryAcquire(STOCK)).isEqualTo(allowed);
        assertThat(bucket.tokens(STOCK))
                .as("looking takes nothing from the bucket")
                .isEqualTo(tokens);
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
        for (int i = 0; i < calls; i++) {
            budget.onCall(STOCK);
        }
        assertThat(takeAll(budget)).isEqualTo(retries);
    }

    @Test
    void retryBudgetForgetsWhatLeftTheWindow() {
        for (int i = 0; i < 100; i++) {
            budget.onCall(STOCK);
        }
        assertThat(takeAll(budget)).isEqualTo(20);

        clock.forward(Duration.ofSeconds(5));
        assertThat(budget.tryAcquire(STOCK))
                .as("5 s later the retries still count")
                .isFalse();

        clock.forward(Duration.ofSeconds(5));
        assertThat(budget.taken(STOCK))
                .as("10 s later calls and retries have left the window")
                .isZero();
        assertThat(takeAll(budget)).as("only the floor is left").isEqualTo(10);
    }

    @Test
    void retryBudgetSlidesSlotBySlot() {
        assertThat(takeAll(budget)).isEqualTo(10); // the floor, all at t = 0
        for (int second = 1; second <= 9; second++) {
            clock.forward(Duration.ofSeconds(1));
            assertThat(budget.tryAcquire(STOCK))
                    .as("t = %d s: the floor's ten are still in the window", second)
                    .isFalse();
        }
        clock.forward(Duration.ofSeconds(1));
        assertThat(takeAll(budget)).as("t = 10 s: the first slot has left").isEqualTo(10);
    }

    @Test
    void aRetryNeedsBothTheBucketAndTheBudgetAndARefusalTakesNothing() {
        RetryLimiter both = RetryLimiter.allOf(bucket, budget);
        for (int i = 0; i < 5; i++) {
            both.onFailure(STOCK);
        }
        assertThat(both.tryAcquire(STOCK)).as("bucket at half").isFalse();
        assertThat(budget.taken(STOCK))
                .as("a refused retry takes nothing from the budget")
                .isZero();
        both.onSuccess(STOCK);
        assertThat(takeAll(both))
                .as("bucket above half: the budget's floor decides")
                .isEqualTo(10);
    }

    @Test
    void allOfGivesBackWhatAnEarlierLimiterTookWhenALaterOneRefuses() {
        RetryLimiter never = target -> false;
        assertThat(RetryLimiter.allOf(budget, never).tryAcquire(STOCK)).isFalse();
        assertThat(budget.taken(STOCK)).isZero();
    }

    @Test
    void unlimitedAllowsEveryAttempt() {
        RetryLimiter unlimited = RetryLimiter.unlimited();
        for (int i = 0; i < 100; i++) {
            unlimited.onFailure(STOCK);
            assertThat(unlimited.tryAcquire(STOCK)).isTrue();
        }
    }

    @Test
    void targetsAreBoundedAndEachGaugeAnnouncedOnce() {
        Map<String, Integer> announced = new ConcurrentHashMap<>();
        TokenBucket bounded = TokenBucket.builder()
                .listener(new RetryListener() {
                    @Override
                    public void tokens(String target, java.util.function.DoubleSupplier tokens) {
                        announced.merge(target, 1, Integer::sum);
                    }
                })
                .build();
        for (int i = 0; i < 200; i++) {
            bounded.onFailure("host-" + i + ":1");
            bounded.onFailure("host-" + i + ":1");
        }
        assertThat(bounded.targets()).hasSize(Targets.MAX + 1).contains(Targets.OVERFLOW);
        assertThat(announced.values()).containsOnly(1);
        assertThat(bounded.tokens("host-199:1"))
                .as("the overflow target's bucket")
                .isEqualTo(0.0);
    }

    @Test
    void targetsStayBoundedWhenManyThreadsMeetNewOnesAtOnce() throws Exception {
        for (int round = 0; round < 20; round++) {
            TokenBucket raced = TokenBucket.builder().build();
            CountDownLatch go = new CountDownLatch(1);
            List<Thread> threads = new ArrayList<>();
            for (int t = 0; t < 8; t++) {
                int offset = t * 1000;
                Thread thread = new Thread(() -> {
                    try {
                        go.await();
                    } catch (InterruptedException e) {
                        return;
                    }
                    for (int i = 0; i < 200; i++) {
                        raced.onSuccess("host-" + (offset + i));
                    }
                });
                thread.start();
                threads.add(thread);
            }
            go.countDown();
            for (Thread thread : threads) {
                thread.join();
            }
            assertThat(raced.targets()).hasSize(Targets.MAX + 1);
        }
    }

    @Test
    void anAttemptWithoutANamedTargetIsCountedAsUnknown() {
        bucket.onFailure(null);
        assertThat(bucket.targets()).containsExactly(Targets.UNKNOWN);
    }

    @ParameterizedTest(name = "{1}")
    @CsvSource(
            delimiter = '|',
            value = {
                "maxTokens 0          | max-tokens must be 1-1000, got 0",
                "tokenRatio 0         | token-ratio must be above 0",
                "tokenRatio 20        | token-ratio must not be above max-tokens (10), got 20.0",
                "percent -1           | budget-percent must be 0-100, got -1.0",
                "window 0             | budget-window must be 1s-1h, got PT0S",
                "minPerSecond -1      | min-retries-per-second must be 0-1000, got -1.0",
            })
    void settingsAreValidatedNamingTheSetting(String setting, String message) {
        String[] parts = setting.trim().split(" ");
        double value = Double.parseDouble(parts[1]);
        Supplier<Object> build = switch (parts[0]) {
            case "maxTokens" ->
                () -> TokenBucket.builder().maxTokens((int) value).build();
            case "tokenRatio" -> () -> TokenBucket.builder().tokenRatio(value).build();
            case "percent" -> () -> RetryBudget.builder().percent(value).build();
            case "window" ->
                () -> RetryBudget.builder()
                        .window(Duration.ofSeconds((long) value))
                        .build();
            default -> () -> RetryBudget.builder().minPerSecond(value).build();
        };
        assertThatThrownBy(build::get)
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageStartingWith(message.trim());
    }

    private static int takeAll(RetryLimiter limiter) {
        int taken = 0;
        while (limiter.tryAcquire(STOCK)) {
            taken++;
            assertThat(taken).isLessThan(10_000);
        }
        return taken;
    }
}
