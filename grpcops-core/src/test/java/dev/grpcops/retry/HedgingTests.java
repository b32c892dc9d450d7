package dev.grpcops.retry;

import static org.assertj.core.api.Assertions.assertThat;

import com.google.common.util.concurrent.Futures;
import com.google.common.util.concurrent.ListenableFuture;
import com.google.common.util.concurrent.SettableFuture;
import dev.grpcops.deadline.Budget;
import dev.grpcops.deadline.BudgetRules;
import io.grpc.Context;
import io.grpc.Deadline;
import io.grpc.Status;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.DoubleSupplier;
import java.util.function.Supplier;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Hedging's rules with futures standing in for calls: the delay learned from answers, the budget
 * and limiter checks, one hop only, first answer wins, the other cancelled.
 */
@Timeout(30)
class HedgingTests {

    /** Hedge after 10 ms once 64 answers have been seen. */
    private static final Hedging HEDGING = new Hedging(95, Duration.ofMillis(10), Duration.ofSeconds(1), 64, 5);

    private final Map<HedgeOutcome, AtomicInteger> outcomes = new ConcurrentHashMap<>();
    private final RetryListener listener = new RetryListener() {
        @Override
        public void hedge(String target, HedgeOutcome outcome) {
            outcomes.computeIfAbsent(outcome, o -> new AtomicInteger()).incrementAndGet();
        }
    };

    private int outcomes(HedgeOutcome outcome) {
        AtomicInteger count = outcomes.get(outcome);
        return count == null ? 0 : count.get();
    }

    private Retry retry(RetryLimiter limiter) {
        Retry retry = Retry.builder(BudgetRules.DEFAULTS)
                .hedging(HEDGING)
                .limiter(limiter)
                .listener(listener)
                .build();
        for (int i = 0; i < 64; i++) {
            retry.hedged(() -> Futures.immediateFuture("warm")); // answers to learn from
        }
        return retry;
    }

    /** A call whose attempts are the futures given, one per attempt, in turn. */
    private static Supplier<ListenableFuture<String>> attempts(List<SettableFuture<String>> started) {
        return () -> {
            SettableFuture<String> attempt = SettableFuture.create();
            started.add(attempt);
            return attempt;
        };
    }

    @Test
    void theListenerReadsTheDelayHedgesFollowOnceEnoughAnswersAreKnown() {
        Map<String, java.util.function.DoubleSupplier> delays = new ConcurrentHashMap<>();
        Retry retry = Retry.builder(BudgetRules.DEFAULTS)
                .hedging(HEDGING)
                .limiter(RetryLimiter.unlimited())
                .listener(new RetryListener() {
                    @Override
                    public void hedgeDelay(String target, java.util.function.DoubleSupplier seconds) {
                        delays.put(target, seconds);
                    }
                })
                .build();
        retry.hedged(() -> Futures.immediateFuture("first"));
        assertThat(delays).hasSize(1);
        java.util.function.DoubleSupplier delay = delays.values().iterator().next();
        assertThat(delay.getAsDouble()).as("too few answers: no hedging").isNaN();

        for (int i = 0; i < 64; i++) {
            retry.hedged(() -> Futures.immediateFuture("warm"));
        }
        // Instant answers: the percentile is below the 10 ms floor.
        assertThat(delay.getAsDouble()).isEqualTo(0.010);
        assertThat(delays).as("one gauge per target").hasSize(1);
    }

    /**
     * A retry on the fake clock {@code now}, warmed with 64 instant answers, and the delay its
     * hedges follow; the listener counts outcomes.
     */
    private Retry warmedOnFakeClock(
            Hedging hedging, RetryLimiter limiter, AtomicLong now, AtomicReference<DoubleSupplier> delay) {
        Retry retry = Retry.builder(BudgetRules.DEFAULTS)
                .hedging(hedging)
                .limiter(limiter)
                .nanoClock(now::get)
                .listener(new RetryListener() {
                    @Override
                    public void hedge(String target, HedgeOutcome outcome) {
                        listener.hedge(target, outcome);
                    }

                    @Override
                    public void hedgeDelay(String target, DoubleSupplier seconds) {
                        delay.set(seconds);
                    }
                })
                .build();
        for (int i = 0; i < 64; i++) {
            retry.hedged(() -> Futures.immediateFuture("warm"));
        }
        assertThat(delay.get().getAsDouble()).isEqualTo(0.010);
        return retry;
    }

    @Test
    void aFirstWhoseHedgeCouldNotBeSentIsNotLearned() throws Exception {
        AtomicLong now = new AtomicLong();
        AtomicReference<DoubleSupplier> delays = new AtomicReference<>();
        Retry retry = warmedOnFakeClock(HEDGING, target -> false, now, delays); // every hedge throttled
        DoubleSupplier delay = delays.get();

        // Twenty calls answer after 500 ms with their hedges throttled: a quarter of all answers.
        for (int i = 1; i <= 20; i++) {
            List<SettableFuture<String>> started = new CopyOnWriteArrayList<>();
            ListenableFuture<String> outcome = retry.hedged(attempts(started));
            int throttled = i;
            Awaitility.await().atMost(Duration.ofSeconds(5)).until(() -> outcomes(HedgeOutcome.THROTTLED) == throttled);
            now.addAndGet(TimeUnit.MILLISECONDS.toNanos(500));
            started.get(0).set("slow");
            assertThat(outcome.get(5, TimeUnit.SECONDS)).isEqualTo("slow");
        }
        now.addAndGet(TimeUnit.SECONDS.toNanos(1));
        retry.hedged(() -> Futures.immediateFuture("after a second"));

        assertThat(delay.getAsDouble())
                .as("the 95th percentile of the answers learned: not the unhedged slow ones")
                .isEqualTo(0.010);
    }

    @Test
    void whileHedgesLoseOneASecondIsSentAndTheFirstsHeldBackAreLearned() throws Exception {
        AtomicLong now = new AtomicLong();
        AtomicReference<DoubleSupplier> delays = new AtomicReference<>();
        Hedging roomForAHedgePerCall = new Hedging(95, Duration.ofMillis(10), Duration.ofSeconds(1), 64, 100);
        Retry retry = warmedOnFakeClock(roomForAHedgePerCall, RetryLimiter.unlimited(), now, delays);
        DoubleSupplier delay = delays.get();

        // The whole target is slow: the first answers before each of nine hedges.
        for (int i = 1; i <= 9; i++) {
            answerFirstAfterTheHedge(retry);
        }
        assertThat(outcomes(HedgeOutcome.LOST)).isEqualTo(9);

        // Hedges lose: twenty calls after them, with room for hedges, get none.
        List<List<SettableFuture<String>>> held = new ArrayList<>();
        List<ListenableFuture<String>> answers = new ArrayList<>();
        for (int i = 0; i < 20; i++) {
            List<SettableFuture<String>> started = new CopyOnWriteArrayList<>();
            answers.add(retry.hedged(attempts(started)));
            held.add(started);
        }
        Awaitility.await().atMost(Duration.ofSeconds(5)).until(() -> outcomes(HedgeOutcome.THROTTLED) == 20);
        assertThat(outcomes(HedgeOutcome.SENT)).isEqualTo(9);
        now.addAndGet(TimeUnit.MILLISECONDS.toNanos(500));
        for (List<SettableFuture<String>> started : held) {
            assertThat(started).hasSize(1);
            started.get(0).set("slow");
        }
        for (ListenableFuture<String> answer : answers) {
            assertThat(answer.get(5, TimeUnit.SECONDS)).isEqualTo("slow");
        }

        // A second later, one hedge goes out to find out whether hedges win again.
        now.addAndGet(TimeUnit.SECONDS.toNanos(1));
        retry.hedged(() -> Futures.immediateFuture("after a second"));
        assertThat(delay.getAsDouble())
                .as("the slow firsts held back are learned: the delay follows them")
                .isGreaterThan(0.4);
        answerFirstAfterTheHedge(retry);
        assertThat(outcomes(HedgeOutcome.SENT)).isEqualTo(10);
    }

    private void answerFirstAfterTheHedge(Retry retry) throws Exception {
        int sent = outcomes(HedgeOutcome.SENT);
        List<SettableFuture<String>> started = new CopyOnWriteArrayList<>();
        ListenableFuture<String> outcome = retry.hedged(attempts(started));
        Awaitility.await().atMost(Duration.ofSeconds(5)).until(() -> outcomes(HedgeOutcome.SENT) == sent + 1);
        started.get(0).set("first");
        assertThat(outcome.get(5, TimeUnit.SECONDS)).isEqualTo("first");
    }

    @Test
    void aCallWithoutAnAnswerAfterTheDelayIsHedgedAndTheFirstAnswerWins() throws Exception {
        Retry retry = retry(RetryLimiter.unlimited());
        List<SettableFuture<String>> started = new CopyOnWriteArrayList<>();

        ListenableFuture<String> outcome = retry.hedged(attempts(started));
        Awaitility.await().atMost(Duration.ofSeconds(5)).until(() -> started.size() == 2);
        started.get(1).set("from the hedge");

        assertThat(outcome.get(5, TimeUnit.SECONDS)).isEqualTo("from the hedge");
        assertThat(started.get(0).isCancelled())
                .as("the first attempt is cancelled")
                .isTrue();
        assertThat(outcomes(HedgeOutcome.SENT)).isEqualTo(1);
        assertThat(outcomes(HedgeOutcome.WON)).isEqualTo(1);
    }

    @Test
    void whenTheFirstAnswersFirstTheHedgeIsCancelledAndLost() throws Exception {
        Retry retry = retry(RetryLimiter.unlimited());
        List<SettableFuture<String>> started = new CopyOnWriteArrayList<>();

        ListenableFuture<String> outcome = retry.hedged(attempts(started));
        Awaitility.await().atMost(Duration.ofSeconds(5)).until(() -> started.size() == 2);
        started.get(0).set("from the first");

        assertThat(outcome.get(5, TimeUnit.SECONDS)).isEqualTo("from the first");
        assertThat(started.get(1).isCancelled()).isTrue();
        assertThat(outcomes(HedgeOutcome.LOST)).isEqualTo(1);
    }

    @Test
    void aFirstThatFailsUnavailableAfterTheHedgeWentOutWaitsForTheHedge() throws Exception {
        Retry retry = retry(RetryLimiter.unlimited());
        List<SettableFuture<String>> started = new CopyOnWriteArrayList<>();

        ListenableFuture<String> outcome = retry.hedged(attempts(started));
        Awaitility.await().atMost(Duration.ofSeconds(5)).until(() -> started.size() == 2);
        started.get(0).setException(Status.UNAVAILABLE.asRuntimeException());
        assertThat(outcome.isDone()).isFalse();
        started.get(1).set("from the hedge");

        assertThat(outcome.get(5, TimeUnit.SECONDS)).isEqualTo("from the hedge");
        assertThat(started).as("no third attempt").hasSize(2);
    }

    @Test
    void aFailureBeforeTheDelayTakesTheRetryPath() throws Exception {
        Retry retry = retry(RetryLimiter.unlimited());
        AtomicInteger attempts = new AtomicInteger();

        ListenableFuture<String> outcome = retry.hedged(() -> attempts.incrementAndGet() == 1
                ? Futures.immediateFailedFuture(Status.UNAVAILABLE.asRuntimeException())
                : Futures.immediateFuture("retried"));

        assertThat(outcome.get(5, TimeUnit.SECONDS)).isEqualTo("retried");
        assertThat(attempts).hasValue(2);
        assertThat(outcomes(HedgeOutcome.SENT)).isZero();
    }

    @Test
    void noHedgeBeforeEnoughAnswersWereSeen() throws Exception {
        java.util.concurrent.ScheduledThreadPoolExecutor timer =
                new java.util.concurrent.ScheduledThreadPoolExecutor(1);
        Retry retry = Retry.builder(BudgetRules.DEFAULTS)
                .hedging(HEDGING)
                .listener(listener)
                .scheduler(timer)
                .build();
        List<SettableFuture<String>> started = new CopyOnWriteArrayList<>();
        ListenableFuture<String> outcome = retry.hedged(attempts(started));
        assertThat(timer.getQueue()).as("no hedge timer").isEmpty();
        timer.shutdownNow();
        assertThat(started).hasSize(1);
        started.get(0).set("alone");
        assertThat(outcome.get(5, TimeUnit.SECONDS)).isEqualTo("alone");
    }

    @Test
    void aLimiterWithoutRoomThrottlesTheHedge() throws Exception {
        Retry retry = retry(target -> false);
        List<SettableFuture<String>> started = new CopyOnWriteArrayList<>();
        ListenableFuture<String> outcome = retry.hedged(attempts(started));
        Awaitility.await().atMost(Duration.ofSeconds(5)).until(() -> outcomes(HedgeOutcome.THROTTLED) == 1);
        assertThat(started).hasSize(1);
        started.get(0).set("alone");
        assertThat(outcome.get(5, TimeUnit.SECONDS)).isEqualTo("alone");
    }

    @Test
    void aBudgetThatCannotCoverAnotherDownstreamCallRefusesTheHedge() throws Exception {
        Retry retry = retry(RetryLimiter.unlimited());
        List<SettableFuture<String>> started = new CopyOnWriteArrayList<>();
        // 0.45 s left: 0.45 - 0.2 reserve = 0.25 s, below the 0.3 s a downstream call needs.
        Context served = Budget.arrived(Deadline.after(450, TimeUnit.MILLISECONDS), BudgetRules.DEFAULTS)
                .attachTo(Context.ROOT);
        ListenableFuture<String> outcome = served.call(() -> retry.hedged(attempts(started)));
        Awaitility.await().atMost(Duration.ofSeconds(5)).until(() -> outcomes(HedgeOutcome.REFUSED) == 1);
        assertThat(started).hasSize(1);
        started.get(0).set("alone");
        assertThat(outcome.get(5, TimeUnit.SECONDS)).isEqualTo("alone");
    }

    @Test
    void aCallThatArrivedAsAnotherHopsRetryIsNeverHedged() throws Exception {
        java.util.concurrent.ScheduledThreadPoolExecutor timer =
                new java.util.concurrent.ScheduledThreadPoolExecutor(1);
        Retry retry = Retry.builder(BudgetRules.DEFAULTS)
                .hedging(HEDGING)
                .listener(listener)
                .scheduler(timer)
                .build();
        for (int i = 0; i < 64; i++) {
            retry.hedged(() -> Futures.immediateFuture("warm"));
        }
        List<SettableFuture<String>> started = new CopyOnWriteArrayList<>();
        Context served = Budget.arrived(Deadline.after(2, TimeUnit.SECONDS), BudgetRules.DEFAULTS, true)
                .attachTo(Context.ROOT);
        ListenableFuture<String> outcome = served.call(() -> retry.hedged(attempts(started)));
        assertThat(timer.getQueue()).as("no hedge timer").isEmpty();
        timer.shutdownNow();
        assertThat(started).hasSize(1);
        started.get(0).set("alone");
        assertThat(outcome.get(5, TimeUnit.SECONDS)).isEqualTo("alone");
        assertThat(outcomes).isEmpty();
    }

    @Test
    void cancellingTheOutcomeCancelsBothAttempts() {
        Retry retry = retry(RetryLimiter.unlimited());
        List<SettableFuture<String>> started = new CopyOnWriteArrayList<>();
        ListenableFuture<String> outcome = retry.hedged(attempts(started));
        Awaitility.await().atMost(Duration.ofSeconds(5)).until(() -> started.size() == 2);
        outcome.cancel(false);
        assertThat(started).allMatch(SettableFuture::isCancelled);
    }

    @Test
    void hedgesStayWithinTheirShareOfCalls() throws Exception {
        // 5 % of the calls of the window plus a floor of 1 per second (10 in 10 s).
        Retry retry = retry(RetryLimiter.unlimited());
        List<SettableFuture<String>> started = new CopyOnWriteArrayList<>();
        List<ListenableFuture<String>> calls = new CopyOnWriteArrayList<>();
        for (int i = 0; i < 100; i++) {
            calls.add(retry.hedged(attempts(started)));
        }
        Awaitility.await()
                .atMost(Duration.ofSeconds(5))
                .until(() -> outcomes(HedgeOutcome.SENT) + outcomes(HedgeOutcome.THROTTLED) == 100);
        // 164 calls in the window (64 warm-up): at most 0.05 x 164 + 10 = 18.2 hedges.
        assertThat(outcomes(HedgeOutcome.SENT)).isBetween(15, 18);
        started.forEach(attempt -> attempt.set("done"));
        for (ListenableFuture<String> call : calls) {
            assertThat(call.get(5, TimeUnit.SECONDS)).isEqualTo("done");
        }
    }

    @Test
    void hedgeOnlyPassesAFailureOnInsteadOfRetrying() {
        for (Hedging hedging : new Hedging[] {HEDGING, null}) {
            Retry retry = Retry.builder(BudgetRules.DEFAULTS).hedging(hedging).build();
            AtomicInteger attempts = new AtomicInteger();
            ListenableFuture<String> outcome = retry.hedgeOnly(() -> {
                attempts.incrementAndGet();
                return Futures.immediateFailedFuture(Status.UNAVAILABLE.asRuntimeException());
            });
            assertThat(outcome.isDone()).isTrue();
            assertThat(org.assertj.core.api.Assertions.catchThrowable(outcome::get))
                    .hasRootCauseInstanceOf(io.grpc.StatusRuntimeException.class);
            assertThat(attempts).as("hedging %s", hedging).hasValue(1);
        }
    }
}
