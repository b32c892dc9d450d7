package dev.grpcops.retry;

import static dev.grpcops.testing.Lockstep.spin;
import static org.assertj.core.api.Assertions.assertThat;

import com.google.common.util.concurrent.Futures;
import com.google.common.util.concurrent.ListenableFuture;
import com.google.common.util.concurrent.SettableFuture;
import dev.grpcops.budget.BudgetRules;
import dev.grpcops.testing.InProcessChain;
import dev.grpcops.testing.Lockstep;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Future;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReferenceArray;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Cancelling a call made through {@link Retry} while its first attempt fails UNAVAILABLE and the
 * retry is decided, scheduled after its pushback, or started: the cancel reaches whatever attempt
 * is or will be in flight, a pending retry never starts, no retry starts long after the cancel,
 * and nothing is left on the scheduler.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class RetryCancelRaceTests {

    private static final int ROUNDS = 4_000;
    /** Batches of {@link #ROUNDS} at most, while the interleavings a test names have not all come. */
    private static final int MAX_BATCHES = 8;
    /** How late after cancel() returned a retry may still start: one that already passed its checks. */
    private static final long LATE_START_BOUND_NANOS = TimeUnit.MILLISECONDS.toNanos(500);

    private final ScheduledThreadPoolExecutor scheduler = new ScheduledThreadPoolExecutor(1);
    private final Lockstep racers = new Lockstep("failing", "cancelling");

    RetryCancelRaceTests() {
        scheduler.setRemoveOnCancelPolicy(true);
    }

    @AfterEach
    void stop() {
        racers.close();
        scheduler.shutdownNow();
    }

    /** One attempt as the test saw it start. */
    private record Attempt(int number, SettableFuture<String> future, long startedNanos, boolean afterCancelReturned) {}

    /** One round: the call, its attempts, and how the race went. */
    private static final class Round {
        final int number;
        final String pushback;
        final boolean retryAnswersAtOnce;
        final List<Attempt> attempts = new ArrayList<>();
        final AtomicInteger attemptCount = new AtomicInteger();
        volatile ListenableFuture<String> outcome;
        volatile boolean failureSet;
        volatile boolean cancelReturnedTrue;
        volatile long cancelReturnedNanos;
        volatile boolean cancelReturned;
        /** Which came first: cancel() returning, or the failure being set (1 and 2, in order). */
        final AtomicInteger sequence = new AtomicInteger();

        volatile int cancelReturnedAt;
        volatile int failureTriedAt;

        Round(int number, String pushback, boolean retryAnswersAtOnce) {
            this.number = number;
            this.pushback = pushback;
            this.retryAnswersAtOnce = retryAnswersAtOnce;
        }

        synchronized List<Attempt> attempts() {
            return new ArrayList<>(attempts);
        }

        @Override
        public String toString() {
            return "round " + number + " (pushback " + pushback + ", retry answers at once " + retryAnswersAtOnce
                    + ", failure set " + failureSet + ", cancel " + cancelReturnedTrue + ", attempts " + attempts()
                    + ")";
        }
    }

    /** Waits until the scheduler's thread has run everything due by now, then returns what is still queued. */
    private int queuedAfterDueTasksRan() throws Exception {
        Future<?> marker = scheduler.submit(() -> {});
        marker.get(10, TimeUnit.SECONDS);
        return scheduler.getQueue().size();
    }

    private Round round(Retry retry, int number, String pushback, boolean retryAnswersAtOnce) throws Exception {
        Round round = new Round(number, pushback, retryAnswersAtOnce);
        SettableFuture<String> first = SettableFuture.create();
        round.outcome = retry.call(() -> {
            int attempt = round.attemptCount.incrementAndGet();
            SettableFuture<String> future = attempt == 1 ? first : SettableFuture.create();
            if (attempt > 1 && retryAnswersAtOnce) {
                future.set("retried");
            }
            synchronized (round) {
                round.attempts.add(new Attempt(attempt, future, System.nanoTime(), round.cancelReturned));
            }
            return future;
        });
        int failAfter = 1 + ThreadLocalRandom.current().nextInt(400);
        int cancelAfter = 1 + ThreadLocalRandom.current().nextInt(400);
        racers.race(
                () -> {
                    spin(failAfter);
                    round.failureTriedAt = round.sequence.incrementAndGet();
                    round.failureSet = first.setException(InProcessChain.unavailable(pushback));
                },
                () -> {
                    spin(cancelAfter);
                    round.cancelReturnedTrue = round.outcome.cancel(true);
                    round.cancelReturnedNanos = System.nanoTime();
                    round.cancelReturned = true;
                    round.cancelReturnedAt = round.sequence.incrementAndGet();
                });
        return round;
    }

    /** What must hold of a round once nothing more can happen in it. */
    private static void check(Round round) {
        List<Attempt> attempts = round.attempts();
        ListenableFuture<String> outcome = round.outcome;
        assertThat(attempts)
                .as("%s: at most the first attempt and one retry", round)
                .hasSizeBetween(1, 2);
        assertThat(outcome.isDone()).as("%s: the outcome is decided", round).isTrue();
        if (round.cancelReturnedTrue && round.cancelReturnedAt < round.failureTriedAt) {
            assertThat(round.failureSet)
                    .as("%s: cancelled before it failed, the first attempt was cancelled too", round)
                    .isFalse();
        }
        if (!round.failureSet) {
            // The first attempt was cancelled before it failed: nothing was left to retry.
            assertThat(attempts.get(0).future().isCancelled())
                    .as("%s: the first attempt was cancelled", round)
                    .isTrue();
            assertThat(attempts).as("%s: no retry of a cancelled call", round).hasSize(1);
        }
        if (outcome.isCancelled()) {
            assertThat(round.cancelReturnedTrue).as("%s", round).isTrue();
            for (Attempt attempt : attempts) {
                boolean answeredByTest = attempt.number() == 1 ? round.failureSet : round.retryAnswersAtOnce;
                if (!answeredByTest) {
                    assertThat(attempt.future().isCancelled())
                            .as("%s: attempt %d, never answered, is cancelled with the call", round, attempt.number())
                            .isTrue();
                }
                if (attempt.afterCancelReturned()) {
                    assertThat(attempt.number())
                            .as("%s: only a retry can start after the cancel", round)
                            .isEqualTo(2);
                    assertThat(attempt.future().isCancelled() || round.retryAnswersAtOnce)
                            .as("%s: a retry started after the cancel is cancelled", round)
                            .isTrue();
                    assertThat(attempt.startedNanos() - round.cancelReturnedNanos)
                            .as("%s: a retry starts no later than a moment after the cancel", round)
                            .isLessThan(LATE_START_BOUND_NANOS);
                }
            }
        } else {
            // The cancel came too late: the call had answered, with its retry's answer.
            assertThat(round.cancelReturnedTrue).as("%s", round).isFalse();
            assertThat(round.failureSet).as("%s", round).isTrue();
            assertThat(attempts).as("%s", round).hasSize(2);
            assertThat(round.retryAnswersAtOnce)
                    .as("%s: only an answered retry ends the call", round)
                    .isTrue();
            assertThat(Futures.getUnchecked(outcome)).isEqualTo("retried");
        }
    }

    /**
     * Pushback absent, 0 or 1 ms (retried at once, or after a delay on the scheduler): over thousands
     * of rounds the cancel lands before the failure, while the retry is decided, while it waits on
     * the scheduler, and after it started.
     */
    @Test
    void cancelRacingAFailureWithAShortPushback() throws Exception {
        Retry retry = Retry.builder(BudgetRules.DEFAULTS)
                .scheduler(scheduler)
                .limiter(RetryLimiter.unlimited())
                .build();
        String[] pushbacks = {null, "0", "1"};
        int rounds = 0;
        int cancelled = 0;
        int retriedBeforeCancel = 0;
        int retryStartedAfterCancel = 0;
        int cancelledBeforeFailure = 0;
        // Batches of rounds (each checking every rule) until each interleaving has come at least once:
        // with one core free they take more rounds to come, never a different outcome.
        for (int batch = 0;
                batch < MAX_BATCHES
                        && (batch == 0
                                || cancelledBeforeFailure == 0
                                || retriedBeforeCancel == 0
                                || cancelled - cancelledBeforeFailure - retriedBeforeCancel - retryStartedAfterCancel
                                        == 0);
                batch++) {
            AtomicReferenceArray<Round> made = new AtomicReferenceArray<>(ROUNDS);
            for (int i = 0; i < ROUNDS; i++) {
                ThreadLocalRandom random = ThreadLocalRandom.current();
                Round round =
                        round(retry, rounds + i, pushbacks[random.nextInt(pushbacks.length)], random.nextInt(4) == 0);
                made.set(i, round);
                if (round.outcome.isCancelled()) {
                    // Whatever the scheduler's thread was doing for this round is over once it ran what is due.
                    assertThat(queuedAfterDueTasksRan())
                            .as("%s: no retry left waiting after the cancel", round)
                            .isZero();
                }
            }
            rounds += ROUNDS;
            // A retry that was not cancelled would start at the latest 1 ms after its failure.
            Awaitility.await("the scheduler idle")
                    .atMost(Duration.ofSeconds(5))
                    .pollInterval(Duration.ofMillis(5))
                    .until(() -> scheduler.getQueue().isEmpty() && scheduler.getActiveCount() == 0);
            assertThat(queuedAfterDueTasksRan()).isZero();
            for (int i = 0; i < ROUNDS; i++) {
                Round round = made.get(i);
                check(round);
                if (round.outcome.isCancelled()) {
                    cancelled++;
                    if (round.cancelReturnedTrue && round.cancelReturnedAt < round.failureTriedAt) {
                        assertThat(round.failureSet)
                                .as("%s: cancelled before it failed, the first attempt was cancelled too", round)
                                .isFalse();
                    }
                    if (!round.failureSet) {
                        cancelledBeforeFailure++;
                    } else if (round.attempts().size() == 2) {
                        if (round.attempts().get(1).afterCancelReturned()) {
                            retryStartedAfterCancel++;
                        } else {
                            retriedBeforeCancel++;
                        }
                    }
                }
            }
        }
        System.out.printf(
                "retry cancel race: %d rounds, %d cancelled (%d before the failure, %d after the retry "
                        + "started, %d retries started after cancel() returned)%n",
                rounds, cancelled, cancelledBeforeFailure, retriedBeforeCancel, retryStartedAfterCancel);
        assertThat(cancelledBeforeFailure)
                .as("rounds cancelled before the first attempt failed")
                .isPositive();
        assertThat(retriedBeforeCancel)
                .as("rounds cancelled while the retry was in flight")
                .isPositive();
        assertThat(cancelled - cancelledBeforeFailure - retriedBeforeCancel - retryStartedAfterCancel)
                .as("rounds cancelled between the failure and the retry's start")
                .isPositive();
    }

    /**
     * A pushback far longer than the test: every retry decided before the cancel waits on the
     * scheduler, and the cancel must take it off there, however the two race (the task scheduled
     * just before, or just after, the cancel looked for it).
     */
    @Test
    void cancelRacingAFailureWithALongPushbackLeavesNoRetryOnTheScheduler() throws Exception {
        BudgetRules roomy = BudgetRules.builder()
                .reserve(Duration.ZERO)
                .defaultBudget(Duration.ofMinutes(10))
                .minDownstream(Duration.ZERO)
                .retryMin(Duration.ZERO)
                .build();
        Retry retry = Retry.builder(roomy)
                .scheduler(scheduler)
                .limiter(RetryLimiter.unlimited())
                .build();
        int scheduledThenCancelled = 0;
        int rounds = 0;
        for (int batch = 0;
                batch < MAX_BATCHES && (batch == 0 || scheduledThenCancelled == 0 || rounds == scheduledThenCancelled);
                batch++) {
            for (int i = 0; i < ROUNDS; i++) {
                Round round = round(retry, rounds++, "60000", false);
                assertThat(round.outcome.isCancelled()).as("%s", round).isTrue();
                assertThat(scheduler.getQueue())
                        .as("%s: the retry waiting out its pushback is gone", round)
                        .isEmpty();
                assertThat(round.attempts())
                        .as("%s: the retry never started", round)
                        .hasSize(1);
                if (round.cancelReturnedAt < round.failureTriedAt) {
                    assertThat(round.failureSet)
                            .as("%s: cancelled before it failed, the first attempt was cancelled too", round)
                            .isFalse();
                }
                if (round.failureSet) {
                    scheduledThenCancelled++;
                }
            }
        }
        assertThat(scheduledThenCancelled)
                .as("rounds whose retry was scheduled before the cancel")
                .isPositive();
        assertThat(rounds - scheduledThenCancelled)
                .as("rounds cancelled before the failure")
                .isPositive();
    }
}
