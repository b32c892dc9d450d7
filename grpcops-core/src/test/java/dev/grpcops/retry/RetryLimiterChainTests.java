package dev.grpcops.retry;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

import dev.grpcops.budget.BudgetRules;
import dev.grpcops.internal.Headers;
import dev.grpcops.internal.WarmUpMark;
import dev.grpcops.proto.chain.v1.CheckoutRequest;
import dev.grpcops.proto.chain.v1.Line;
import dev.grpcops.proto.chain.v1.QuoteRequest;
import dev.grpcops.testing.InProcessChain;
import io.grpc.Metadata;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.stub.MetadataUtils;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/** Retry limits over real in-process gRPC hops: pushback, RESOURCE_EXHAUSTED, one hop retries, the bucket. */
@Timeout(value = 30, unit = TimeUnit.SECONDS)
class RetryLimiterChainTests {

    private static final QuoteRequest QUOTE =
            QuoteRequest.newBuilder().setSku("flaky-x").build();
    private static final Duration PUSHBACK = Duration.ofMillis(300);

    private static InProcessChain chain(java.util.function.IntFunction<StatusRuntimeException> stock) throws Exception {
        return InProcessChain.builder(BudgetRules.DEFAULTS)
                .retries()
                .stock((call, request) -> stock.apply(call))
                .build();
    }

    @ParameterizedTest(name = "pushback {0}")
    @ValueSource(strings = {"-1", "-300", "soon", ""})
    void negativeOrUnparsablePushbackIsNotRetried(String pushback) throws Exception {
        try (InProcessChain chain = chain(n -> n == 1 ? InProcessChain.unavailable(pushback) : null)) {
            StatusRuntimeException failed = catchThrowableOfType(
                    StatusRuntimeException.class,
                    () -> chain.pricing()
                            .withDeadlineAfter(1500, TimeUnit.MILLISECONDS)
                            .quote(QUOTE));

            assertThat(failed.getStatus().getCode()).isEqualTo(Status.Code.UNAVAILABLE);
            assertThat(chain.stockArrivals).hasSize(1);
            assertThat(chain.pricingListener.outcomes(RetryOutcome.PUSHBACK)).isEqualTo(1);
            assertThat(chain.pricingListener.outcomes(RetryOutcome.ATTEMPTED)).isZero();
        }
    }

    @Test
    void positivePushbackIsRetriedAfterItsDelayWhenTheBudgetStillCoversIt() throws Exception {
        try (InProcessChain chain =
                chain(n -> n == 1 ? InProcessChain.unavailable(Long.toString(PUSHBACK.toMillis())) : null)) {
            long start = System.nanoTime();
            assertThat(chain.pricing()
                            .withDeadlineAfter(1500, TimeUnit.MILLISECONDS)
                            .quote(QUOTE)
                            .getQty())
                    .isEqualTo(7);
            long took = System.nanoTime() - start;

            assertThat(chain.stockArrivals).hasSize(2);
            long gap = chain.stockArrivals.get(1).nanos()
                    - chain.stockArrivals.get(0).nanos();
            assertThat(Duration.ofNanos(gap))
                    .as("the retry waited the server's pushback")
                    .isGreaterThanOrEqualTo(PUSHBACK);
            assertThat(Duration.ofNanos(took))
                    .as("and answered within the caller's deadline")
                    .isLessThan(Duration.ofMillis(1500));
            assertThat(chain.pricingListener.outcomes(RetryOutcome.ATTEMPTED)).isEqualTo(1);
        }
    }

    @Test
    void positivePushbackIsNotRetriedWhenTheDelayWouldSpendTheBudget() throws Exception {
        try (InProcessChain chain =
                chain(n -> n == 1 ? InProcessChain.unavailable(Long.toString(PUSHBACK.toMillis())) : null)) {
            long start = System.nanoTime();
            StatusRuntimeException failed = catchThrowableOfType(
                    StatusRuntimeException.class,
                    () -> chain.pricing()
                            .withDeadlineAfter(800, TimeUnit.MILLISECONDS)
                            .quote(QUOTE));
            long took = System.nanoTime() - start;

            assertThat(failed.getStatus().getCode()).isEqualTo(Status.Code.UNAVAILABLE);
            assertThat(chain.stockArrivals).hasSize(1);
            assertThat(chain.pricingListener.outcomes(RetryOutcome.PUSHBACK)).isEqualTo(1);
            // 0.8 − 0.3 − 0.2 < 0.7 is known at once: the caller is answered, not made to wait the pushback.
            assertThat(Duration.ofNanos(took)).isLessThan(PUSHBACK);
        }
    }

    @Test
    void resourceExhaustedIsNeverRetried() throws Exception {
        try (InProcessChain chain = chain(n -> n == 1 ? Status.RESOURCE_EXHAUSTED.asRuntimeException() : null)) {
            StatusRuntimeException failed = catchThrowableOfType(
                    StatusRuntimeException.class,
                    () -> chain.pricing()
                            .withDeadlineAfter(1500, TimeUnit.MILLISECONDS)
                            .quote(QUOTE));

            assertThat(failed.getStatus().getCode()).isEqualTo(Status.Code.RESOURCE_EXHAUSTED);
            assertThat(chain.stockArrivals).hasSize(1);
            assertThat(chain.pricingListener.outcomes).isEmpty();
        }
    }

    @Test
    void theRetryCarriesPreviousAttempts() throws Exception {
        try (InProcessChain chain = chain(n -> n == 1 ? InProcessChain.unavailable(null) : null)) {
            assertThat(chain.pricing()
                            .withDeadlineAfter(1500, TimeUnit.MILLISECONDS)
                            .quote(QUOTE)
                            .getQty())
                    .isEqualTo(7);

            assertThat(chain.stockArrivals)
                    .extracting(InProcessChain.Arrival::previousAttempts)
                    .containsExactly(null, "1");
        }
    }

    @Test
    void aCallThatArrivedAsARetryIsNotRetriedAgain() throws Exception {
        try (InProcessChain chain = chain(n -> n == 1 ? InProcessChain.unavailable(null) : null)) {
            Metadata headers = new Metadata();
            headers.put(Headers.PREVIOUS_ATTEMPTS, "1");
            StatusRuntimeException failed = catchThrowableOfType(
                    StatusRuntimeException.class,
                    () -> chain.pricing()
                            .withInterceptors(MetadataUtils.newAttachHeadersInterceptor(headers))
                            .withDeadlineAfter(1500, TimeUnit.MILLISECONDS)
                            .quote(QUOTE));

            assertThat(failed.getStatus().getCode()).isEqualTo(Status.Code.UNAVAILABLE);
            assertThat(chain.stockArrivals).hasSize(1);
        }
    }

    /** design §5's seed behaviour through the governor: retried at 1.5 s, not at 0.8 s (the deadline floor). */
    @Test
    void seedBehaviourHolds() throws Exception {
        try (InProcessChain chain = chain(n -> n == 1 ? InProcessChain.unavailable(null) : null)) {
            assertThat(chain.pricing()
                            .withDeadlineAfter(1500, TimeUnit.MILLISECONDS)
                            .quote(QUOTE)
                            .getQty())
                    .isEqualTo(7);
            assertThat(chain.stockArrivals).hasSize(2);
        }
        try (InProcessChain chain = chain(n -> n == 1 ? InProcessChain.unavailable(null) : null)) {
            StatusRuntimeException failed = catchThrowableOfType(
                    StatusRuntimeException.class,
                    () -> chain.pricing()
                            .withDeadlineAfter(800, TimeUnit.MILLISECONDS)
                            .quote(QUOTE));
            assertThat(failed.getStatus().getCode()).isEqualTo(Status.Code.UNAVAILABLE);
            assertThat(chain.stockArrivals).hasSize(1);
            assertThat(chain.pricingListener.outcomes(RetryOutcome.REFUSED)).isEqualTo(1);
        }
    }

    /** Backend down: A6's bucket (10, 0.1) lets two retries through (10 → 9 → 8 → 7 → 6 → 5), then none. */
    @Test
    void theBucketStopsRetriesToABackendThatIsDown() throws Exception {
        TokenBucket bucket = TokenBucket.builder().build();
        try (InProcessChain chain = InProcessChain.builder(BudgetRules.DEFAULTS)
                .retries(() -> RetryLimiter.allOf(bucket, RetryBudget.builder().build()))
                .stock((n, request) -> InProcessChain.unavailable(null))
                .build()) {
            for (int i = 0; i < 20; i++) {
                assertThat(catchThrowableOfType(
                                StatusRuntimeException.class,
                                () -> chain.pricing()
                                        .withDeadlineAfter(1500, TimeUnit.MILLISECONDS)
                                        .quote(QUOTE)))
                        .isNotNull();
            }
            assertThat(chain.pricingListener.outcomes(RetryOutcome.ATTEMPTED)).isEqualTo(2);
            assertThat(chain.pricingListener.outcomes(RetryOutcome.THROTTLED)).isEqualTo(18);
            assertThat(chain.stockArrivals).hasSize(22);
            assertThat(bucket.targets())
                    .as("Pricing's calls to Stock, by the channel's authority")
                    .hasSize(1);
            assertThat(bucket.tokens(bucket.targets().get(0))).isEqualTo(0.0);
        }
    }

    /**
     * Three hops, both upper hops retrying through BudgetRetry, Stock down: pricing retries its
     * first Check (2 Stock calls); edge's retry of the Quote arrives with grpc-previous-rpc-attempts,
     * so pricing does not retry under it (1 more): 3 Stock calls, not the 4 of a retry at each hop.
     */
    @Test
    void theRetryNeverDoublesAtTwoHops() throws Exception {
        try (InProcessChain chain = chain(n -> InProcessChain.unavailable(null))) {
            Line line = chain.edge()
                    .withDeadlineAfter(3, TimeUnit.SECONDS)
                    .checkout(CheckoutRequest.newBuilder().addSkus("x").build())
                    .getLines(0);

            assertThat(line.getAvailable()).isFalse();
            assertThat(line.getReason()).isEqualTo("UNAVAILABLE");
            assertThat(chain.pricingArrivals)
                    .extracting(InProcessChain.Arrival::previousAttempts)
                    .containsExactly(null, "1");
            assertThat(chain.stockArrivals)
                    .extracting(InProcessChain.Arrival::previousAttempts)
                    .containsExactly(null, "1", null);
            assertThat(chain.edgeListener.outcomes(RetryOutcome.ATTEMPTED)).isEqualTo(1);
            assertThat(chain.pricingListener.outcomes(RetryOutcome.ATTEMPTED)).isEqualTo(1);
        }
    }

    /**
     * A service warming up while its downstream is not up yet: each warm-up Quote reaches Stock once,
     * is neither retried nor counted, and spends no token, so the first real Quote after them is retried.
     */
    @Test
    void warmUpCallsAreNeitherRetriedNorCountedByTheBucket() throws Exception {
        TokenBucket bucket = TokenBucket.builder().build();
        try (InProcessChain chain = InProcessChain.builder(BudgetRules.DEFAULTS)
                .retries(() -> RetryLimiter.allOf(bucket, RetryBudget.builder().build()))
                .stock((n, request) -> n <= 21 ? InProcessChain.unavailable(null) : null)
                .build()) {
            for (int i = 0; i < 20; i++) {
                StatusRuntimeException failed = catchThrowableOfType(
                        StatusRuntimeException.class,
                        () -> chain.pricing()
                                .withInterceptors(MetadataUtils.newAttachHeadersInterceptor(warmUp(WarmUpMark.token())))
                                .withDeadlineAfter(1500, TimeUnit.MILLISECONDS)
                                .quote(QUOTE));
                assertThat(failed.getStatus().getCode()).isEqualTo(Status.Code.UNAVAILABLE);
            }
            assertThat(chain.pricingArrivals).hasSize(20).allMatch(InProcessChain.Arrival::warmUp);
            assertThat(chain.stockArrivals).as("one attempt each").hasSize(20);
            assertThat(chain.pricingListener.outcomes).isEmpty();
            assertThat(bucket.targets()).as("no warm-up attempt accounted").isEmpty();

            assertThat(chain.pricing()
                            .withDeadlineAfter(1500, TimeUnit.MILLISECONDS)
                            .quote(QUOTE)
                            .getQty())
                    .isEqualTo(7);
            assertThat(chain.pricingListener.outcomes(RetryOutcome.ATTEMPTED)).isEqualTo(1);
        }
    }

    /**
     * Only the process's own token marks a warm-up call: a caller who sends the header with anything
     * else (the value it once had, "1") is served as any caller, retried and counted.
     */
    @Test
    void aWarmUpHeaderFromOutsideIsIgnored() throws Exception {
        TokenBucket bucket = TokenBucket.builder().build();
        try (InProcessChain chain = InProcessChain.builder(BudgetRules.DEFAULTS)
                .retries(() -> RetryLimiter.allOf(bucket, RetryBudget.builder().build()))
                .stock((n, request) -> n == 1 ? InProcessChain.unavailable(null) : null)
                .build()) {
            assertThat(chain.pricing()
                            .withInterceptors(MetadataUtils.newAttachHeadersInterceptor(warmUp("1")))
                            .withDeadlineAfter(1500, TimeUnit.MILLISECONDS)
                            .quote(QUOTE)
                            .getQty())
                    .as("retried as any call")
                    .isEqualTo(7);
            assertThat(chain.pricingArrivals)
                    .extracting(InProcessChain.Arrival::warmUp)
                    .containsExactly(false);
            assertThat(chain.pricingListener.outcomes(RetryOutcome.ATTEMPTED)).isEqualTo(1);
            assertThat(bucket.targets()).as("accounted").isNotEmpty();
        }
    }

    /** The mark stays in the process: Edge's warm-up Checkout reaches Pricing as a Quote like any other. */
    @Test
    void theWarmUpMarkStaysInTheProcess() throws Exception {
        try (InProcessChain chain = chain(n -> null)) {
            chain.edge()
                    .withInterceptors(MetadataUtils.newAttachHeadersInterceptor(warmUp(WarmUpMark.token())))
                    .withDeadlineAfter(3, TimeUnit.SECONDS)
                    .checkout(CheckoutRequest.newBuilder().addSkus("x").build());

            assertThat(chain.pricingArrivals)
                    .extracting(InProcessChain.Arrival::warmUp)
                    .containsExactly(false);
            assertThat(chain.stockArrivals)
                    .extracting(InProcessChain.Arrival::warmUp)
                    .containsExactly(false);
        }
    }

    private static Metadata warmUp(String value) {
        Metadata headers = new Metadata();
        headers.put(WarmUpMark.HEADER, value);
        return headers;
    }
}
