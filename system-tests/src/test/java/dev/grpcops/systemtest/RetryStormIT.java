package dev.grpcops.systemtest;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.grpcops.proto.chain.v1.CheckoutReply;
import dev.grpcops.proto.chain.v1.CheckoutRequest;
import dev.grpcops.proto.chain.v1.EdgeGrpc;
import dev.grpcops.proto.chain.v1.Line;
import dev.grpcops.proto.chain.v1.StatsRequest;
import dev.grpcops.proto.chain.v1.StockGrpc;
import io.grpc.ManagedChannel;
import io.grpc.Status;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Duration;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.stream.IntStream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * design §11 with the jars as processes: Stock down, two Edges under the same steady Checkouts of
 * 3 SKUs at a 1.5 s deadline, one with the retry limiter (the default), one with it measured but
 * not enforced ({@code grpcops.retry.limiter.enabled=false}: the retry of design §4 alone).
 * Then Stock back: once healthy traffic has refilled the bucket, a flaky SKU is retried again.
 * Measured numbers are printed and appended to target/retry-numbers.txt (quoted in
 * docs/deadlines-and-retries.md, "Retries that cannot become a storm", and design §11).
 */
@Timeout(value = 3, unit = TimeUnit.MINUTES, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
@Order(8) // the lanes' order: junit-platform.properties
class RetryStormIT {

    private static final Duration DEADLINE = Duration.ofMillis(1500);
    private static final Duration OUTAGE = Duration.ofSeconds(6);
    private static final double FLOOR_PER_SECOND = 1.0; // grpcops.retry.limiter.min-retries-per-second
    private static final double PERCENT = 10.0; // grpcops.retry.limiter.budget-percent

    private static ServiceProcess stock;
    private static ServiceProcess pricing;
    private static ServiceProcess governed;
    private static ServiceProcess ungoverned;
    private static ManagedChannel toStock;
    private static ManagedChannel toGoverned;
    private static ManagedChannel toUngoverned;

    @BeforeAll
    @Timeout(value = 5, unit = TimeUnit.MINUTES, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
    static void startChain() {
        stock = ServiceProcess.start("stock-service", "stock-storm", "127.0.0.1", java.util.Map.of());
        pricing = ServiceProcess.start(
                "pricing-service",
                "pricing-storm",
                "127.0.0.1",
                java.util.Map.of(),
                "--grpc.client.stock.address=static://" + stock.target());
        governed = ServiceProcess.start(
                "edge-service",
                "edge-governed",
                "127.0.0.1",
                java.util.Map.of(),
                "--grpc.client.pricing.address=static://" + pricing.target());
        ungoverned = ServiceProcess.start(
                "edge-service",
                "edge-ungoverned",
                "127.0.0.1",
                java.util.Map.of(),
                "--grpc.client.pricing.address=static://" + pricing.target(),
                "--grpcops.retry.limiter.enabled=false");
        for (ServiceProcess service : List.of(stock, pricing, governed, ungoverned)) {
            service.awaitServing(Duration.ofSeconds(90));
        }
        toStock = stock.channel();
        toGoverned = governed.channel();
        toUngoverned = ungoverned.channel();
        // Connections and the JIT warm up on the first calls; healthy Quotes keep the buckets full.
        for (int i = 0; i < 20; i++) {
            for (ManagedChannel edge : List.of(toGoverned, toUngoverned)) {
                EdgeGrpc.newBlockingStub(edge)
                        .withDeadlineAfter(10, TimeUnit.SECONDS)
                        .checkout(CheckoutRequest.newBuilder()
                                .addSkus("warm-" + i)
                                .build());
            }
        }
    }

    @AfterAll
    @Timeout(value = 2, unit = TimeUnit.MINUTES, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
    static void stopChain() {
        for (ManagedChannel channel : new ManagedChannel[] {toGoverned, toUngoverned, toStock}) {
            if (channel != null) {
                channel.shutdownNow();
            }
        }
        ServiceProcess.stopAll(governed, ungoverned, pricing, stock);
    }

    @Test
    void anOutageIsNotHitTwiceAsHardAndRetriesComeBackAfterIt() throws Exception {
        stock.terminate(Duration.ofSeconds(30));
        double attemptedBefore = attempted(governed);
        double ungovernedAttemptedBefore = attempted(ungoverned);

        Outage withGovernor = new Outage(toGoverned, "g");
        Outage withoutGovernor = new Outage(toUngoverned, "u");
        long start = System.nanoTime();
        try (SteadyLoad a = new SteadyLoad(2, Duration.ofMillis(50), withGovernor::checkout);
                SteadyLoad b = new SteadyLoad(2, Duration.ofMillis(50), withoutGovernor::checkout)) {
            // The load runs for the outage's length; the wait is the experiment, not a synchronisation.
            await().pollDelay(OUTAGE).atMost(OUTAGE.plusSeconds(5)).until(() -> true);
            a.close();
            b.close();
            double seconds = (System.nanoTime() - start) / 1e9;
            answeredWithLines(a);
            answeredWithLines(b);

            double attempted = attempted(governed) - attemptedBefore;
            double ungovernedAttempted = attempted(ungoverned) - ungovernedAttemptedBefore;
            String governedMetrics = governed.metrics();
            String measured = String.format(
                    Locale.ROOT,
                    "measured: Stock down %.1f s, 2 threads x Checkouts of 3 SKUs at 1.5 s per Edge:"
                            + " with the governor %d Checkouts, %d failed Quotes, %.0f retries attempted"
                            + " (throttled %.0f, refused %.0f), slowest Checkout %d ms, bucket %.1f tokens;"
                            + " without it %d Checkouts, %d failed Quotes, %.0f retries attempted, slowest %d ms",
                    seconds,
                    withGovernor.checkouts.get(),
                    withGovernor.failedQuotes.get(),
                    attempted,
                    Prometheus.sum(governedMetrics, "grpc_budget_retries_total", "outcome=\"throttled\""),
                    Prometheus.sum(governedMetrics, "grpc_budget_retries_total", "outcome=\"refused\""),
                    withGovernor.slowestMs.get(),
                    Prometheus.sum(governedMetrics, "grpc_retry_tokens"),
                    withoutGovernor.checkouts.get(),
                    withoutGovernor.failedQuotes.get(),
                    ungovernedAttempted,
                    withoutGovernor.slowestMs.get());
            record(measured);

            assertThat(withGovernor.failedQuotes.get()).as("the load did run").isGreaterThan(100);
            assertThat(withGovernor.otherLines.get())
                    .as("every line UNAVAILABLE")
                    .isZero();
            assertThat(attempted)
                    .as("retries ≤ 10 % of failed Quotes + the per-second floor")
                    .isLessThanOrEqualTo(PERCENT / 100 * withGovernor.failedQuotes.get() + FLOOR_PER_SECOND * seconds);
            assertThat(ungovernedAttempted)
                    .as("without the governor every failed Quote was sent twice")
                    .isGreaterThanOrEqualTo(0.9 * withoutGovernor.failedQuotes.get());
        }

        stock.start();
        stock.awaitServing(Duration.ofSeconds(90));
        // Healthy Quotes put 0.1 token back each. The flaky SKU's own failure costs a token before
        // its retry is decided (A6), so the bucket must be above half + 1 for the retry to pass.
        AtomicInteger healthy = new AtomicInteger();
        await("the governed Edge's bucket above half + 1")
                .atMost(Duration.ofSeconds(60))
                .pollDelay(Duration.ZERO)
                .pollInterval(Duration.ofMillis(50))
                .until(() -> {
                    CheckoutRequest.Builder request = CheckoutRequest.newBuilder();
                    IntStream.range(0, 10).forEach(i -> request.addSkus("healthy-" + healthy.incrementAndGet()));
                    EdgeGrpc.newBlockingStub(toGoverned)
                            .withDeadlineAfter(5, TimeUnit.SECONDS)
                            .checkout(request.build());
                    return Prometheus.sum(governed.metrics(), "grpc_retry_tokens") > 6;
                });
        String flaky = "flaky-after-outage-" + System.nanoTime();
        Line line = EdgeGrpc.newBlockingStub(toGoverned)
                .withDeadlineAfter(DEADLINE.toMillis(), TimeUnit.MILLISECONDS)
                .checkout(CheckoutRequest.newBuilder().addSkus(flaky).build())
                .getLines(0);
        record(String.format(
                Locale.ROOT,
                "measured: after the outage, %d healthy Quotes refilled the bucket above half + 1;"
                        + " flaky SKU at 1.5 s: available=%s, Stock calls=%d",
                healthy.get(),
                line.getAvailable(),
                stockCalls(flaky)));
        assertThat(line.getAvailable()).isTrue();
        assertThat(stockCalls(flaky)).isEqualTo(2);
    }

    /**
     * Three hops, both upper ones retrying: Pricing with {@code pricing.retry-stock=true}, Stock
     * down (nothing listens on its port). Edge's Quote: Pricing tries Stock and retries (2 Stock
     * calls); Edge retries the Quote with grpc-previous-rpc-attempts, and Pricing does not retry
     * under it (1 more). Stock calls per failed line: 3, not the 4 of a retry at each hop.
     */
    @Test
    void theRetryNeverDoublesAtTwoHops() throws Exception {
        int nobody = ServiceProcess.freePort("127.0.0.1");
        try (ServiceProcess retryingPricing = ServiceProcess.start(
                "pricing-service",
                "pricing-retrying",
                "127.0.0.1",
                java.util.Map.of(),
                "--grpc.client.stock.address=static://127.0.0.1:" + nobody,
                "--pricing.retry-stock=true",
                // Stock is down from the start, and this counts retries: no waiting for a first
                // connection (the start-up window), which would end the Quote at its deadline instead.
                "--grpcops.client.wait-for-ready-window=0s")) {
            retryingPricing.awaitServing(Duration.ofSeconds(90));
            // Edge starts once Pricing listens. Started together, Edge could try Pricing before it
            // listened and still be in reconnect backoff when the Checkout below comes: both its Quote
            // attempts would then fail at Edge, never reaching Pricing, which is not what this counts.
            try (ServiceProcess edge = ServiceProcess.start(
                    "edge-service",
                    "edge-three-hops",
                    "127.0.0.1",
                    java.util.Map.of(),
                    "--grpc.client.pricing.address=static://" + retryingPricing.target())) {
                edge.awaitServing(Duration.ofSeconds(90));
                threeHops(retryingPricing, edge);
            }
        }
    }

    /** One Checkout of one SKU through both retrying hops, Stock down: what each hop counted. */
    private void threeHops(ServiceProcess retryingPricing, ServiceProcess edge) throws Exception {
        ManagedChannel toEdge = edge.channel();
        try {
            // One SKU: with more, Pricing's own bucket (10 tokens, −1 per failure) would already
            // throttle the third retry, which hides the rule this test is about.
            int skus = 1;
            CheckoutReply reply = EdgeGrpc.newBlockingStub(toEdge)
                    .withDeadlineAfter(3, TimeUnit.SECONDS)
                    .checkout(CheckoutRequest.newBuilder().addSkus("three-hops").build());
            assertThat(reply.getLinesList()).extracting(Line::getReason).containsOnly("UNAVAILABLE");

            String pricingMetrics = retryingPricing.metrics();
            double stockCalls = Prometheus.sum(
                    pricingMetrics, "grpc_budget_downstream_seconds_count", "method=\"chain.v1.Stock/Check\"");
            double quotes = Prometheus.sum(
                    pricingMetrics, "grpc_budget_remaining_seconds_count", "method=\"chain.v1.Pricing/Quote\"");
            double edgeRetries = attempted(edge);
            double pricingRetries = attempted(retryingPricing);
            record(String.format(
                    Locale.ROOT,
                    "measured: three hops, Stock down, both upper hops retrying, %d SKUs:"
                            + " Edge retried %.0f Quotes, Pricing served %.0f Quotes and retried %.0f Stock calls,"
                            + " Stock was called %.0f times (%.1f per SKU; a retry at each hop would be 4)",
                    skus,
                    edgeRetries,
                    quotes,
                    pricingRetries,
                    stockCalls,
                    stockCalls / skus));
            assertThat(edgeRetries).isEqualTo(skus);
            assertThat(quotes).isEqualTo(2 * skus);
            assertThat(pricingRetries)
                    .as("only Quotes that did not arrive as a retry")
                    .isEqualTo(skus);
            assertThat(stockCalls).isEqualTo(3 * skus);
        } finally {
            toEdge.shutdownNow();
        }
    }

    /** One Edge's side of the outage: Checkouts of 3 fresh SKUs, what came back, how long it took. */
    /**
     * Every Checkout was answered with its lines: none failed because Stock was down. A Checkout may
     * still miss its 1.5 s at the client when the machine stalls the chain that long (seen once in
     * CI, two of ~200 with the other lane starting JVMs; the slowest answer is ~200 ms otherwise), so
     * a few DEADLINE_EXCEEDED are the machine's, not the outage's: at most 5 % of the Checkouts.
     */
    private static void answeredWithLines(SteadyLoad load) {
        Map<Status.Code, AtomicInteger> failures = load.failures();
        assertThat(failures.keySet())
                .as("Checkouts failed otherwise than by the machine's stalls: " + failures)
                .isSubsetOf(Status.Code.DEADLINE_EXCEEDED);
        int late = failures.getOrDefault(Status.Code.DEADLINE_EXCEEDED, new AtomicInteger())
                .get();
        assertThat(late)
                .as("Checkouts past their 1.5 s of " + (load.succeeded() + late))
                .isLessThanOrEqualTo((load.succeeded() + late) / 20);
    }

    private static final class Outage {
        final AtomicInteger checkouts = new AtomicInteger();
        final AtomicInteger failedQuotes = new AtomicInteger();
        final AtomicInteger otherLines = new AtomicInteger();
        final AtomicLong slowestMs = new AtomicLong();
        private final ManagedChannel edge;
        private final String prefix;

        Outage(ManagedChannel edge, String prefix) {
            this.edge = edge;
            this.prefix = prefix;
        }

        void checkout() {
            int n = checkouts.incrementAndGet();
            long start = System.nanoTime();
            CheckoutReply reply = EdgeGrpc.newBlockingStub(edge)
                    .withDeadlineAfter(DEADLINE.toMillis(), TimeUnit.MILLISECONDS)
                    .checkout(CheckoutRequest.newBuilder()
                            .addSkus(prefix + n + "-a")
                            .addSkus(prefix + n + "-b")
                            .addSkus(prefix + n + "-c")
                            .build());
            slowestMs.accumulateAndGet(TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start), Math::max);
            for (Line line : reply.getLinesList()) {
                if (!line.getAvailable() && line.getReason().equals("UNAVAILABLE")) {
                    failedQuotes.incrementAndGet();
                } else {
                    otherLines.incrementAndGet();
                }
            }
        }
    }

    private static double attempted(ServiceProcess edge) {
        return Prometheus.sum(edge.metrics(), "grpc_budget_retries_total", "outcome=\"attempted\"");
    }

    private static long stockCalls(String sku) {
        return StockGrpc.newBlockingStub(toStock)
                .withDeadlineAfter(5, TimeUnit.SECONDS)
                .stats(StatsRequest.newBuilder().setSku(sku).build())
                .getSkus(0)
                .getCalls();
    }

    private static void record(String line) throws IOException {
        System.out.println(line);
        Files.writeString(
                Path.of("target/retry-numbers.txt"),
                line + System.lineSeparator(),
                StandardOpenOption.CREATE,
                StandardOpenOption.APPEND);
    }
}
