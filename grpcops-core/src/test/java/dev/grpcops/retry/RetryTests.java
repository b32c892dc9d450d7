package dev.grpcops.retry;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

import com.google.common.util.concurrent.Futures;
import com.google.common.util.concurrent.ListenableFuture;
import com.google.common.util.concurrent.SettableFuture;
import dev.grpcops.budget.Budget;
import dev.grpcops.budget.BudgetRules;
import dev.grpcops.proto.chain.v1.QuoteRequest;
import dev.grpcops.testing.InProcessChain;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import java.util.List;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/** The flaky SKU of the chain: retried once on UNAVAILABLE when the budget still allows it. */
class RetryTests {

    private static final QuoteRequest QUOTE =
            QuoteRequest.newBuilder().setSku("flaky-x").build();

    @Test
    void retriesUnavailableWhenTheBudgetAllows() throws Exception {
        try (InProcessChain chain = InProcessChain.builder(BudgetRules.DEFAULTS)
                .retries()
                .stock(InProcessChain.firstCallFails())
                .build()) {
            assertThat(chain.pricing()
                            .withDeadlineAfter(1500, TimeUnit.MILLISECONDS)
                            .quote(QUOTE)
                            .getQty())
                    .isEqualTo(7);

            assertThat(chain.stockCalls()).isEqualTo(2);
            assertThat(chain.pricingListener.retriesAttempted).hasValue(1);
            assertThat(chain.pricingListener.retriesRefused).hasValue(0);
        }
    }

    @Test
    void refusesTheRetryWhenTheBudgetIsShort() throws Exception {
        try (InProcessChain chain = InProcessChain.builder(BudgetRules.DEFAULTS)
                .retries()
                .stock(InProcessChain.firstCallFails())
                .build()) {
            StatusRuntimeException failed = catchThrowableOfType(
                    StatusRuntimeException.class,
                    () -> chain.pricing()
                            .withDeadlineAfter(800, TimeUnit.MILLISECONDS)
                            .quote(QUOTE));

            assertThat(failed.getStatus().getCode()).isEqualTo(Status.Code.UNAVAILABLE);
            assertThat(chain.stockCalls()).isEqualTo(1);
            assertThat(chain.pricingListener.retriesRefused).hasValue(1);
            assertThat(chain.pricingListener.retriesAttempted).hasValue(0);
        }
    }

    @Test
    void retryRunsUnderTheSameBudgetAsTheFirstAttempt() throws Exception {
        try (InProcessChain chain = InProcessChain.builder(BudgetRules.DEFAULTS)
                .retries()
                .stock(InProcessChain.firstCallFails())
                .build()) {
            chain.pricing().withDeadlineAfter(1500, TimeUnit.MILLISECONDS).quote(QUOTE);

            // Both attempts are held to the same deadline: the second sees a little less, never a fresh budget.
            assertThat(chain.stockArrivals).hasSize(2);
            assertThat(chain.stockArrivals.get(1).deadlineSeconds())
                    .isLessThanOrEqualTo(chain.stockArrivals.get(0).deadlineSeconds())
                    .isGreaterThan(1.0);
        }
    }

    @Test
    void blockingFormRetriesOutsideAServedCallUnderAFreshDefaultBudget() throws Exception {
        Retry retry = Retry.builder(BudgetRules.DEFAULTS).build();
        int[] attempts = {0};
        String answer = retry.blocking(() -> {
            assertThat(Budget.current()).get().extracting(Budget::defaulted).isEqualTo(true);
            if (attempts[0]++ == 0) {
                throw Status.UNAVAILABLE.asRuntimeException();
            }
            return "ok";
        });
        assertThat(answer).isEqualTo("ok");
        assertThat(attempts[0]).isEqualTo(2);
    }

    @Test
    void otherFailuresAreNotRetried() {
        Retry retry = Retry.builder(BudgetRules.DEFAULTS).build();
        int[] attempts = {0};
        StatusRuntimeException failed = catchThrowableOfType(
                StatusRuntimeException.class,
                () -> retry.blocking(() -> {
                    attempts[0]++;
                    throw Status.INTERNAL.asRuntimeException();
                }));
        assertThat(failed.getStatus().getCode()).isEqualTo(Status.Code.INTERNAL);
        assertThat(attempts[0]).isEqualTo(1);
    }

    @Test
    void cancellingTheOutcomeCancelsTheAttemptInProgress() {
        Retry retry = Retry.builder(BudgetRules.DEFAULTS).build();
        SettableFuture<String> attempt = SettableFuture.create();

        ListenableFuture<String> outcome = retry.call(() -> attempt);
        outcome.cancel(false);

        assertThat(attempt.isCancelled()).isTrue();
    }

    @Test
    void cancellingDuringAPushbackDelayStartsNoRetry() {
        ScheduledThreadPoolExecutor scheduler = new ScheduledThreadPoolExecutor(1);
        scheduler.setRemoveOnCancelPolicy(true);
        try {
            Retry retry =
                    Retry.builder(BudgetRules.DEFAULTS).scheduler(scheduler).build();
            AtomicInteger attempts = new AtomicInteger();

            ListenableFuture<String> outcome = retry.call(() -> {
                attempts.incrementAndGet();
                return Futures.immediateFailedFuture(InProcessChain.unavailable("300"));
            });
            assertThat(scheduler.getQueue()).hasSize(1); // the retry, waiting out the pushback
            outcome.cancel(false);

            assertThat(scheduler.getQueue()).isEmpty();
            assertThat(attempts).hasValue(1);
        } finally {
            scheduler.shutdownNow();
        }
    }

    /** The caller leaves while the pushback delay runs: the retry is not sent, and no token is spent on it. */
    @Test
    void aCallerThatLeavesDuringAPushbackDelayGetsNoRetry() {
        dev.grpcops.testing.FakeClock clock = new dev.grpcops.testing.FakeClock();
        Retry retry =
                Retry.builder(BudgetRules.DEFAULTS).scheduler(clock.scheduler()).build();
        AtomicInteger attempts = new AtomicInteger();
        io.grpc.Context.CancellableContext caller = io.grpc.Context.current().withCancellation();
        List<ListenableFuture<String>> outcome = new java.util.ArrayList<>();

        caller.run(() -> outcome.add(retry.call(() -> {
            attempts.incrementAndGet();
            return Futures.immediateFailedFuture(InProcessChain.unavailable("300"));
        })));
        caller.cancel(null);
        clock.forward(java.time.Duration.ofSeconds(1));

        assertThat(attempts).as("attempts sent").hasValue(1);
        assertThat(Status.fromThrowable(catchThrowableOfType(
                                java.util.concurrent.ExecutionException.class, outcome.get(0)::get))
                        .getCode())
                .isEqualTo(Status.Code.CANCELLED);
        clock.assertNoLeftoverTasks();
    }

    @Test
    void theAsyncFormRetriesUnavailableOnceAndAnswersWithTheRetry() throws Exception {
        Retry retry = Retry.builder(BudgetRules.DEFAULTS).build();
        AtomicInteger attempts = new AtomicInteger();

        ListenableFuture<String> outcome = retry.call(() -> attempts.incrementAndGet() == 1
                ? Futures.immediateFailedFuture(Status.UNAVAILABLE.asRuntimeException())
                : Futures.immediateFuture("second"));

        assertThat(outcome.get(5, TimeUnit.SECONDS)).isEqualTo("second");
        assertThat(attempts).hasValue(2);
    }

    @Test
    void aListenerThatThrowsCostsTheCallNothing() {
        RuntimeException broken = new IllegalStateException("a broken metrics listener");
        RetryListener throwing = new RetryListener() {
            @Override
            public void outcome(String target, RetryOutcome outcome) {
                throw broken;
            }
        };
        Retry retry = Retry.builder(BudgetRules.DEFAULTS).listener(throwing).build();

        java.util.concurrent.atomic.AtomicInteger attempts = new java.util.concurrent.atomic.AtomicInteger();
        ListenableFuture<String> outcome = retry.call(() -> attempts.incrementAndGet() == 1
                ? Futures.immediateFailedFuture(Status.UNAVAILABLE.asRuntimeException())
                : Futures.immediateFuture("retried"));

        // Metrics that break do not change what the caller gets: the retry is made and answers.
        assertThat(outcome.isDone()).isTrue();
        assertThat(Futures.getUnchecked(outcome)).isEqualTo("retried");
    }

    @Test
    void aCallThatReturnsNoFutureFailsItsOutcomeInsteadOfThrowing() {
        Retry retry = Retry.builder(BudgetRules.DEFAULTS).build();

        ListenableFuture<String> outcome = retry.call(() -> null);

        assertThat(outcome.isDone()).isTrue();
        assertThat(catchThrowableOfType(java.util.concurrent.ExecutionException.class, outcome::get))
                .hasCauseInstanceOf(NullPointerException.class)
                .hasMessageContaining("returned no future");
    }
}
