package dev.grpcops.retry;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

import com.google.common.util.concurrent.Futures;
import com.google.common.util.concurrent.ListenableFuture;
import com.google.common.util.concurrent.SettableFuture;
import com.google.common.util.concurrent.internal.InternalFutureFailureAccess;
import com.google.common.util.concurrent.internal.InternalFutures;
import dev.grpcops.budget.Budget;
import dev.grpcops.budget.BudgetRules;
import dev.grpcops.testing.FakeClock;
import io.grpc.Context;
import io.grpc.Deadline;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.DoubleSupplier;
import java.util.function.Supplier;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Hedging's rules with futures standing in for calls: the delay learned from answers, the budget
 * and limiter checks, one hop only, first answer wins, the other cancelled.
 */
@Timeout(30)
class HedgingTests {

    @RegisterExtension
    final FakeClock clock = new FakeClock();

    /** Hedge after 10 ms once 64 answers have been seen. */
    private static final Hedging HEDGING = Hedging.builder()
            .percentile(95)
            .delay(Duration.ofMillis(10), Duration.ofSeconds(1))
            .minSamples(64)
            .maxExtraPercent(5)
            .build();

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
     * A retry reading time from {@code clock} (its scheduler stays the real one), warmed with 64 instant
     * answers, and the delay its hedges follow; the listener counts outcomes.
     */
    private Retry warmedOnFakeClock(
            Hedging hedging, RetryLimiter limiter, FakeClock clock, AtomicReference<DoubleSupplier> delay) {
        Retry retry = Retry.builder(BudgetRules.DEFAULTS)
                .hedging(hedging)
                .limiter(limiter)
                .nanoClock(clock.nanoClock())
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

    /** A retry on {@link #clock} (its scheduler too), every hedge throttled by the limiter; the delay its hedges follow. */
    private Retry throttledOnTheFakeClock(AtomicReference<DoubleSupplier> delay) {
        return Retry.builder(BudgetRules.DEFAULTS)
                .hedging(HEDGING)
                .limiter(target -> false)
                .scheduler(clock.scheduler())
                .nanoClock(clock.nanoClock())
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
    }

    /** A call whose first attempt answers after {@code latencyMs} of fake time. */
    private void answersAfter(Retry retry, long latencyMs) throws Exception {
        List<SettableFuture<String>> started = new CopyOnWriteArrayList<>();
        ListenableFuture<String> outcome = retry.hedged(attempts(started));
        clock.forwardMillis(latencyMs);
        started.get(0).set("answer");
        assertThat(outcome.get(5, TimeUnit.SECONDS)).isEqualTo("answer");
    }

    /**
     * design §16: the delay learns from every first answer, whether or not its hedge was held back.
     * Learned only when the hedge went out, the answers slower than the delay (exactly those whose
     * hedge was due) are the ones left out, the percentile falls, more hedges are due and held back,
     * and the delay ratchets down to its floor.
     */
    @Test
    void everyFirstAnswerIsLearnedWhetherOrNotItsHedgeWasHeldBack() throws Exception {
        AtomicReference<DoubleSupplier> delays = new AtomicReference<>();
        Retry retry = throttledOnTheFakeClock(delays);
        // Answers spread evenly over 1-100 ms: the 95th percentile is about 95 ms.
        for (int i = 0; i < 300; i++) {
            answersAfter(retry, 1 + i % 100);
        }
        double learned = delays.get().getAsDouble();
        assertThat(learned).as("learned from the first answers").isBetween(0.085, 0.1);

        // The same answers for another 20 s, every hedge due held back by the limiter.
        for (int i = 0; i < 400; i++) {
            answersAfter(retry, 1 + i % 100);
        }
        assertThat(outcomes(HedgeOutcome.THROTTLED)).as("hedges held back").isPositive();
        assertThat(delays.get().getAsDouble())
                .as("the delay, after the hedges held back (it was %.3f s)", learned)
                .isGreaterThanOrEqualTo(0.9 * learned);
    }

    @Test
    void aSlowFirstWhoseHedgeWasHeldBackRaisesTheDelay() throws Exception {
        AtomicReference<DoubleSupplier> delays = new AtomicReference<>();
        Retry retry = throttledOnTheFakeClock(delays);
        for (int i = 0; i < 64; i++) {
            answersAfter(retry, 0);
        }
        assertThat(delays.get().getAsDouble()).isEqualTo(0.010);

        // Twenty answers after 500 ms, their hedges throttled: a quarter of all answers.
        for (int i = 0; i < 20; i++) {
            answersAfter(retry, 500);
        }
        clock.forward(Duration.ofSeconds(1));
        answersAfter(retry, 0);
        assertThat(delays.get().getAsDouble())
                .as("the 95th percentile of every answer, the slow ones held back included (to the histogram's 1/16)")
                .isCloseTo(0.5, org.assertj.core.api.Assertions.within(0.04));
    }

    /** A retry on {@link #clock}, hedges paid by nobody, warmed with 64 instant answers: it hedges after 10 ms. */
    private Retry hedgingOnTheFakeClock() throws Exception {
        Retry retry = Retry.builder(BudgetRules.DEFAULTS)
                .hedging(Hedging.builder()
                        .percentile(95)
                        .delay(Duration.ofMillis(10), Duration.ofSeconds(1))
                        .minSamples(64)
                        .maxExtraPercent(100)
                        .build())
                .limiter(RetryLimiter.unlimited())
                .scheduler(clock.scheduler())
                .nanoClock(clock.nanoClock())
                .listener(listener)
                .build();
        for (int i = 0; i < 64; i++) {
            answersAfter(retry, 0);
        }
        return retry;
    }

    /** A hedged call whose hedge has gone out (10 ms of fake time later); its two attempts in {@code started}. */
    private ListenableFuture<String> hedgedAndSent(Retry retry, List<SettableFuture<String>> started) {
        ListenableFuture<String> outcome = retry.hedged(attempts(started));
        clock.forwardMillis(10);
        assertThat(started).as("the first and its hedge").hasSize(2);
        return outcome;
    }

    /** The caller leaves before the hedge delay is over: no hedge is sent for it. */
    @Test
    void noHedgeIsSentForACallerThatHasLeft() throws Exception {
        Retry retry = hedgingOnTheFakeClock();
        List<SettableFuture<String>> started = new CopyOnWriteArrayList<>();
        Context.CancellableContext caller = Context.current().withCancellation();
        caller.run(() -> retry.hedged(attempts(started)));
        caller.cancel(null);
        clock.forwardMillis(10);

        assertThat(started).as("the first attempt only").hasSize(1);
        assertThat(outcomes(HedgeOutcome.SENT)).isZero();
        started.get(0).setException(failure(Status.Code.CANCELLED));
    }

    /**
     * Under overload calls fail by the thousand a second: the future a call returns hands its failure
     * to a callback as it is (Guava's path for its own futures), not in a new {@code
     * ExecutionException} with a stack trace taken per reader.
     */
    @ParameterizedTest(name = "hedged {0}")
    @ValueSource(booleans = {true, false})
    void aFailedCallsFutureHandsItsFailureOverWithoutANewException(boolean hedged) {
        Retry retry = Retry.builder(BudgetRules.DEFAULTS).hedging(HEDGING).build();
        SettableFuture<String> attempt = SettableFuture.create();
        ListenableFuture<String> outcome = hedged ? retry.hedged(() -> attempt) : retry.call(() -> attempt);
        StatusRuntimeException failure = failure(Status.Code.NOT_FOUND);
        attempt.setException(failure);

        assertThat(outcome).isInstanceOf(InternalFutureFailureAccess.class);
        assertThat(InternalFutures.tryInternalFastPathGetFailure((InternalFutureFailureAccess) outcome))
                .isSameAs(failure);
    }

    private static StatusRuntimeException failure(Status.Code code) {
        return Status.fromCode(code).withDescription("replica says " + code).asRuntimeException();
    }

    /** design §16, gRFC A6's non-fatal codes: a hedge that fails as a broken replica does not decide the call. */
    @ParameterizedTest
    @CsvSource({"INTERNAL", "UNKNOWN", "UNAVAILABLE", "RESOURCE_EXHAUSTED", "DATA_LOSS", "DEADLINE_EXCEEDED"})
    void aHedgeThatFailsWithoutAnAnswerWaitsForTheFirst(Status.Code code) throws Exception {
        Retry retry = hedgingOnTheFakeClock();
        List<SettableFuture<String>> started = new CopyOnWriteArrayList<>();
        ListenableFuture<String> outcome = hedgedAndSent(retry, started);

        started.get(1).setException(failure(code));
        assertThat(outcome).as("the first may still answer").isNotDone();
        started.get(0).set("first");
        assertThat(outcome.get()).isEqualTo("first");
        assertThat(outcomes(HedgeOutcome.WON) + outcomes(HedgeOutcome.LOST))
                .as("no race: the hedge never answered")
                .isZero();
    }

    @Test
    void aFirstThatFailsWithoutAnAnswerWaitsForTheHedge() throws Exception {
        Retry retry = hedgingOnTheFakeClock();
        List<SettableFuture<String>> started = new CopyOnWriteArrayList<>();
        ListenableFuture<String> outcome = hedgedAndSent(retry, started);

        started.get(0).setException(failure(Status.Code.INTERNAL));
        assertThat(outcome).isNotDone();
        started.get(1).set("hedge");
        assertThat(outcome.get()).isEqualTo("hedge");
    }

    @Test
    void whenBothFailWithoutAnAnswerTheFirstsFailureIsTheCalls() throws Exception {
        Retry retry = hedgingOnTheFakeClock();
        List<SettableFuture<String>> started = new CopyOnWriteArrayList<>();
        ListenableFuture<String> outcome = hedgedAndSent(retry, started);

        started.get(1).setException(failure(Status.Code.UNAVAILABLE));
        started.get(0).setException(failure(Status.Code.INTERNAL));
        assertThat(Status.fromThrowable(catchThrowableOfType(ExecutionException.class, outcome::get))
                        .getCode())
                .isEqualTo(Status.Code.INTERNAL);
    }

    /** An application status is the replica's answer: it decides, and the other attempt is cancelled. */
    @Test
    void anApplicationErrorDecidesTheCall() throws Exception {
        Retry retry = hedgingOnTheFakeClock();
        List<SettableFuture<String>> started = new CopyOnWriteArrayList<>();
        ListenableFuture<String> outcome = hedgedAndSent(retry, started);

        started.get(1).setException(failure(Status.Code.NOT_FOUND));
        assertThat(Status.fromThrowable(catchThrowableOfType(ExecutionException.class, outcome::get))
                        .getCode())
                .isEqualTo(Status.Code.NOT_FOUND);
        assertThat(started.get(0).isCancelled()).isTrue();
        assertThat(outcomes(HedgeOutcome.WON))
                .as("it raced the first to an answer")
                .isEqualTo(1);
    }

    @Test
    void aHedgeIsScoredOnlyWhenItRacedTheFirstToAnAnswer() throws Exception {
        Retry retry = hedgingOnTheFakeClock();
        List<SettableFuture<String>> won = new CopyOnWriteArrayList<>();
        ListenableFuture<String> first = hedgedAndSent(retry, won);
        won.get(1).set("hedge");
        assertThat(first.get()).isEqualTo("hedge");
        assertThat(won.get(0).isCancelled()).isTrue();

        List<SettableFuture<String>> lost = new CopyOnWriteArrayList<>();
        ListenableFuture<String> second = hedgedAndSent(retry, lost);
        lost.get(0).set("first");
        assertThat(second.get()).isEqualTo("first");
        assertThat(lost.get(1).isCancelled()).isTrue();

        assertThat(outcomes(HedgeOutcome.WON)).isEqualTo(1);
        assertThat(outcomes(HedgeOutcome.LOST)).isEqualTo(1);
    }

    /** The caller leaving ends both attempts; that is not the hedge losing, and the target's score does not move. */
    @Test
    void theCallerCancellingScoresNeither() throws Exception {
        Retry retry = hedgingOnTheFakeClock();
        for (int i = 0; i < 20; i++) {
            Context.CancellableContext served = Context.current().withCancellation();
            List<SettableFuture<String>> started = new CopyOnWriteArrayList<>();
            ListenableFuture<String> outcome = served.call(() -> hedgedAndSent(retry, started));
            served.cancel(null);
            started.get(0).setException(failure(Status.Code.CANCELLED));
            started.get(1).setException(failure(Status.Code.CANCELLED));
            assertThat(outcome.isDone()).isTrue();
        }
        assertThat(outcomes(HedgeOutcome.WON) + outcomes(HedgeOutcome.LOST)).isZero();
        // Twenty lost hedges would have put the target in the losing state: hedges still go out.
        assertThat(outcomes(HedgeOutcome.SENT)).isEqualTo(20);
        List<SettableFuture<String>> after = new CopyOnWriteArrayList<>();
        hedgedAndSent(retry, after).cancel(true);
        assertThat(outcomes(HedgeOutcome.SENT)).isEqualTo(21);
    }

    @Test
    void whileHedgesLoseOneASecondIsSentAndTheFirstsHeldBackAreLearned() throws Exception {
        AtomicReference<DoubleSupplier> delays = new AtomicReference<>();
        Hedging roomForAHedgePerCall = Hedging.builder()
                .percentile(95)
                .delay(Duration.ofMillis(10), Duration.ofSeconds(1))
                .minSamples(64)
                .maxExtraPercent(100)
                .build();
        Retry retry = warmedOnFakeClock(roomForAHedgePerCall, RetryLimiter.unlimited(), clock, delays);
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
        clock.forwardMillis(500);
        for (List<SettableFuture<String>> started : held) {
            assertThat(started).hasSize(1);
            started.get(0).set("slow");
        }
        for (ListenableFuture<String> answer : answers) {
            assertThat(answer.get(5, TimeUnit.SECONDS)).isEqualTo("slow");
        }

        // A second later, one hedge goes out to find out whether hedges win again.
        clock.forward(Duration.ofSeconds(1));
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
