package dev.grpcops.budget;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

import com.google.common.util.concurrent.Futures;
import com.google.common.util.concurrent.ListenableFuture;
import com.google.common.util.concurrent.SettableFuture;
import dev.grpcops.proto.chain.v1.QuoteRequest;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/** SPEC §5's flaky SKU: retried once on UNAVAILABLE when the budget still allows it. */
class BudgetRetryTests {

    private static final QuoteRequest QUOTE = QuoteRequest.newBuilder().setSku("flaky-x").build();

    @Test
    void retriesUnavailableWhenTheBudgetAllows() throws Exception {
        try (InProcessChain chain = new InProcessChain(BudgetRules.DEFAULTS, true)) {
            assertThat(chain.pricing().withDeadlineAfter(1500, TimeUnit.MILLISECONDS).quote(QUOTE).getQty()).isEqualTo(7);

            assertThat(chain.stockCalls()).isEqualTo(2);
            assertThat(chain.listener.retriesAttempted).hasValue(1);
            assertThat(chain.listener.retriesRefused).hasValue(0);
        }
    }

    @Test
    void refusesTheRetryWhenTheBudgetIsShort() throws Exception {
        try (InProcessChain chain = new InProcessChain(BudgetRules.DEFAULTS, true)) {
            StatusRuntimeException failed = catchThrowableOfType(StatusRuntimeException.class,
                    () -> chain.pricing().withDeadlineAfter(800, TimeUnit.MILLISECONDS).quote(QUOTE));

            assertThat(failed.getStatus().getCode()).isEqualTo(Status.Code.UNAVAILABLE);
            assertThat(chain.stockCalls()).isEqualTo(1);
            assertThat(chain.listener.retriesRefused).hasValue(1);
            assertThat(chain.listener.retriesAttempted).hasValue(0);
        }
    }

    @Test
    void retryRunsUnderTheSameBudgetAsTheFirstAttempt() throws Exception {
        try (InProcessChain chain = new InProcessChain(BudgetRules.DEFAULTS, true)) {
            chain.pricing().withDeadlineAfter(1500, TimeUnit.MILLISECONDS).quote(QUOTE);

            // Both attempts are held to the same deadline: the second sees a little less, never a fresh budget.
            assertThat(chain.stockReceived).hasSize(2);
            assertThat(chain.stockReceived.get(1)).isLessThanOrEqualTo(chain.stockReceived.get(0)).isGreaterThan(1.0);
        }
    }

    @Test
    void blockingFormRetriesOutsideAServedCallUnderAFreshDefaultBudget() throws Exception {
        BudgetRetry retry = new BudgetRetry(BudgetRules.DEFAULTS, BudgetListener.NONE);
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
        BudgetRetry retry = new BudgetRetry(BudgetRules.DEFAULTS, BudgetListener.NONE);
        int[] attempts = {0};
        StatusRuntimeException failed = catchThrowableOfType(StatusRuntimeException.class, () -> retry.blocking(() -> {
            attempts[0]++;
            throw Status.INTERNAL.asRuntimeException();
        }));
        assertThat(failed.getStatus().getCode()).isEqualTo(Status.Code.INTERNAL);
        assertThat(attempts[0]).isEqualTo(1);
    }

    @Test
    void cancellingTheOutcomeCancelsTheAttemptInProgress() {
        BudgetRetry retry = new BudgetRetry(BudgetRules.DEFAULTS, BudgetListener.NONE);
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
            BudgetRetry retry = new BudgetRetry(BudgetRules.DEFAULTS,
                    new RetryGovernor(RetryThrottling.DEFAULTS, System::nanoTime, BudgetListener.NONE),
                    BudgetListener.NONE, scheduler);
            AtomicInteger attempts = new AtomicInteger();

            ListenableFuture<String> outcome = retry.call(() -> {
                attempts.incrementAndGet();
                return Futures.immediateFailedFuture(RetryChain.unavailable("300"));
            });
            assertThat(scheduler.getQueue()).hasSize(1); // the retry, waiting out the pushback
            outcome.cancel(false);

            assertThat(scheduler.getQueue()).isEmpty();
            assertThat(attempts).hasValue(1);
        } finally {
            scheduler.shutdownNow();
        }
    }

    @Test
    void theAsyncFormRetriesUnavailableOnceAndAnswersWithTheRetry() throws Exception {
        BudgetRetry retry = new BudgetRetry(BudgetRules.DEFAULTS, BudgetListener.NONE);
        AtomicInteger attempts = new AtomicInteger();

        ListenableFuture<String> outcome = retry.call(() -> attempts.incrementAndGet() == 1
                ? Futures.immediateFailedFuture(Status.UNAVAILABLE.asRuntimeException())
                : Futures.immediateFuture("second"));

        assertThat(outcome.get(5, TimeUnit.SECONDS)).isEqualTo("second");
        assertThat(attempts).hasValue(2);
    }

    @Test
    void aListenerThatThrowsWhileDecidingFailsTheOutcomeInsteadOfLeavingItPending() {
        RuntimeException broken = new IllegalStateException("a broken metrics listener");
        BudgetListener throwing = new BudgetListener() {
            @Override
            public void retryOutcome(String target, RetryOutcome outcome) {
                throw broken;
            }
        };
        BudgetRetry retry = new BudgetRetry(BudgetRules.DEFAULTS, throwing);

        ListenableFuture<String> outcome = retry.call(
                () -> Futures.immediateFailedFuture(Status.UNAVAILABLE.asRuntimeException()));

        assertThat(outcome.isDone()).isTrue();
        assertThat(catchThrowableOfType(java.util.concurrent.ExecutionException.class, outcome::get))
                .hasCause(broken);
    }
}
