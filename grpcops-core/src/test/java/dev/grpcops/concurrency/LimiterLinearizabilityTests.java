package dev.grpcops.concurrency;

import dev.grpcops.retry.RetryBudget;
import dev.grpcops.retry.TokenBucket;
import java.time.Duration;
import org.jetbrains.lincheck.datastructures.ModelCheckingOptions;
import org.jetbrains.lincheck.datastructures.Operation;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The retry limiters' state, under every interleaving of two threads that Lincheck's model
 * checker explores: each concurrent run must equal some sequential order of the same operations
 * (linearizable), so no token or retry is won or lost to a race.
 */
@Timeout(120)
class LimiterLinearizabilityTests {

    /** The token bucket of gRFC A6, one target: failures cost a token, successes give a tenth back. */
    public static class TokenBucketOperations {

        private final TokenBucket bucket =
                TokenBucket.builder().maxTokens(4).tokenRatio(0.5).build();

        @Operation
        public void onSuccess() {
            bucket.onSuccess("t");
        }

        @Operation
        public void onFailure() {
            bucket.onFailure("t");
        }

        @Operation
        public boolean tryAcquire() {
            return bucket.tryAcquire("t");
        }

        @Operation
        public double tokens() {
            return bucket.tokens("t");
        }
    }

    /** The retry budget, one target, its clock standing still: retries within a share of the calls. */
    public static class RetryBudgetOperations {

        private final RetryBudget budget = RetryBudget.builder()
                .percent(50)
                .minPerSecond(0.1)
                .window(Duration.ofSeconds(10))
                .nanoClock(() -> 1_000_000_000L)
                .build();

        @Operation
        public void onCall() {
            budget.onCall("t");
        }

        @Operation
        public boolean tryAcquire() {
            return budget.tryAcquire("t");
        }

        @Operation
        public void release() {
            budget.release("t");
        }

        @Operation
        public long taken() {
            return budget.taken("t");
        }
    }

    @Test
    void theTokenBucketIsLinearizable() {
        new ModelCheckingOptions().iterations(30).invocationsPerIteration(500).check(TokenBucketOperations.class);
    }

    @Test
    void theRetryBudgetIsLinearizable() {
        new ModelCheckingOptions().iterations(30).invocationsPerIteration(500).check(RetryBudgetOperations.class);
    }
}
