package dev.grpcops.systemtest;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.grpcops.budget.LedgerLine;
import dev.grpcops.proto.chain.v1.CheckoutReply;
import dev.grpcops.proto.chain.v1.CheckoutRequest;
import dev.grpcops.proto.chain.v1.EdgeGrpc;
import dev.grpcops.proto.chain.v1.PricingGrpc;
import dev.grpcops.proto.chain.v1.QuoteRequest;
import dev.grpcops.proto.chain.v1.SkuStats;
import dev.grpcops.proto.chain.v1.StatsRequest;
import dev.grpcops.proto.chain.v1.StockGrpc;
import dev.grpcops.testsupport.OtlpReceiver;
import dev.grpcops.testsupport.OtlpReceiver.CheckoutHops;
import dev.grpcops.testsupport.OtlpReceiver.ReceivedSpan;
import io.grpc.ManagedChannel;
import io.grpc.Metadata;
import io.grpc.stub.MetadataUtils;
import java.io.IOException;
import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * A chain of both integrations: the suite's Edge and Stock on net.devh and Spring Boot 3, and
 * between them Pricing on Spring gRPC and Spring Boot 4 ({@code examples/pricing-boot4}, on
 * grpcops-spring-grpc-starter). The budget and the caller's criticality cross from a Boot 3 hop to
 * the Boot 4 one and on to a Boot 3 hop again, the budget ledger names every hop, and a Checkout is
 * one trace of five spans across the three.
 */
@Order(11) // the lanes' order: junit-platform.properties
@Timeout(value = 4, unit = TimeUnit.MINUTES, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
class MixedChainIT {

    /** The ledger's own secret, given to every hop (never the admin token). */
    private static final String LEDGER_TOKEN = "mixed-chain-ledger-" + Long.toHexString(System.nanoTime());

    private static OtlpReceiver traces;
    private static ServiceProcess stock;
    private static ServiceProcess pricing;
    private static ServiceProcess edge;
    private static ManagedChannel toStock;
    private static ManagedChannel toPricing;
    private static ManagedChannel toEdge;

    @BeforeAll
    @Timeout(value = 3, unit = TimeUnit.MINUTES, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
    static void startChain() throws IOException {
        String host = "127.0.0.1";
        Map<String, String> env = Map.of("GRPCOPS_BUDGET_LEDGER_TOKEN", LEDGER_TOKEN);
        traces = new OtlpReceiver(0);
        // Every trace sampled and sent within 100 ms: Boot 3's property names, then Boot 4's.
        String[] boot3Traces = {
            "--management.otlp.tracing.endpoint=" + traces.endpoint(),
            "--management.tracing.sampling.probability=1.0",
            "--management.tracing.opentelemetry.export.schedule-delay=100ms"
        };
        stock = ServiceProcess.start("stock-service", "stock-service-mixed", host, env, boot3Traces);
        pricing = ServiceProcess.start(
                "examples/pricing-boot4",
                "pricing-boot4",
                host,
                env,
                "--spring.grpc.client.channel.stock.target=" + stock.target(),
                "--management.opentelemetry.tracing.export.otlp.endpoint=" + traces.endpoint(),
                "--management.tracing.sampling.probability=1.0",
                "--management.opentelemetry.tracing.export.schedule-delay=100ms");
        edge = ServiceProcess.start(
                "edge-service",
                "edge-service-mixed",
                host,
                env,
                concat(boot3Traces, "--grpc.client.pricing.address=static://" + pricing.target()));
        for (ServiceProcess service : List.of(stock, pricing, edge)) {
            service.awaitServing(Duration.ofSeconds(90));
        }
        toStock = stock.channel();
        toPricing = pricing.channel();
        toEdge = edge.channel();
        for (int i = 0; i < 10; i++) {
            edge().withDeadlineAfter(10, TimeUnit.SECONDS)
                    .checkout(CheckoutRequest.newBuilder().addSkus("warm-" + i).build());
        }
    }

    @AfterAll
    @Timeout(value = 2, unit = TimeUnit.MINUTES, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
    static void stopChain() {
        for (ManagedChannel channel : new ManagedChannel[] {toEdge, toPricing, toStock}) {
            if (channel != null) {
                channel.shutdownNow();
            }
        }
        ServiceProcess.stopAll(edge, pricing, stock);
        if (traces != null) {
            traces.close();
        }
    }

    private static String[] concat(String[] first, String... more) {
        return Stream.concat(Arrays.stream(first), Arrays.stream(more)).toArray(String[]::new);
    }

    @Test
    void aCheckoutsBudgetCrossesTheBoot4HopLessEachHopsReserve() {
        CheckoutReply reply = edge().withDeadlineAfter(1, TimeUnit.SECONDS)
                .checkout(CheckoutRequest.newBuilder().addSkus("mixed-1s").build());

        assertThat(reply.getLinesList())
                .singleElement()
                .satisfies(line -> assertThat(line.getSku()).isEqualTo("mixed-1s"));
        // 1 s at Edge, less Edge's 200 ms reserve at Pricing (Boot 4), less Pricing's 200 ms at Stock.
        assertThat(stats("mixed-1s").getReceivedDeadlineSList())
                .isNotEmpty()
                .allSatisfy(seconds -> assertThat(seconds).isBetween(0.45, 0.61));
    }

    @Test
    void aCheckoutIsOneTraceAcrossBothIntegrationsWithTheBudgetAtEveryHop() {
        // 3 s tells this Checkout's trace from the other checks' (1, 2, 5 and 10 s).
        edge().withDeadlineAfter(3, TimeUnit.SECONDS)
                .checkout(CheckoutRequest.newBuilder().addSkus("mixed-traced").build());

        // Five spans, and still five after some more of the exporters' 100 ms batches.
        List<ReceivedSpan> trace = await("the Checkout's five spans")
                .atMost(Duration.ofSeconds(30))
                .during(Duration.ofMillis(600))
                .until(
                        () -> traces.traceServed(
                                "edge-service", "chain.v1.Edge/Checkout", ms -> ms > 2_500 && ms <= 3_000),
                        spans -> spans.size() == 5);
        // Exactly one span of each, each the parent of the next: Spring gRPC's observations on the
        // Boot 4 hop make none of their own.
        CheckoutHops hops = CheckoutHops.of(trace, "pricing-boot4");
        assertThat(trace).hasSize(5);
        double pricingIn = OtlpReceiver.ms(hops.pricingServed(), "grpcops.budget.remaining_ms");
        assertThat(pricingIn)
                .as("Pricing (Boot 4) on arrival: at most Edge's attempt deadline")
                .isLessThanOrEqualTo(OtlpReceiver.ms(hops.edgeAttempt(), "grpcops.deadline_ms"));
        assertThat(OtlpReceiver.ms(hops.pricingAttempt(), "grpcops.deadline_ms"))
                .as("Pricing's Check: what was left less its 200 ms reserve")
                .isLessThanOrEqualTo(pricingIn - 200);
        assertThat(OtlpReceiver.ms(hops.stockServed(), "grpcops.budget.remaining_ms"))
                .as("Stock (Boot 3) on arrival: at most Pricing's attempt deadline")
                .isLessThanOrEqualTo(OtlpReceiver.ms(hops.pricingAttempt(), "grpcops.deadline_ms"));
    }

    @Test
    void theBoot4HopGivesACallWithoutDeadlineTheDefaultBudgetDownstream() {
        PricingGrpc.newBlockingStub(toPricing)
                .quote(QuoteRequest.newBuilder().setSku("mixed-none").build());

        assertThat(stats("mixed-none").getReceivedDeadlineSList())
                .singleElement()
                .satisfies(seconds -> assertThat(seconds).isBetween(1.6, 1.81));
    }

    @Test
    void theLedgerNamesEveryHopOfBothIntegrations() {
        Metadata headers = new Metadata();
        headers.put(LedgerLine.KEY, LEDGER_TOKEN);
        AtomicReference<Metadata> trailers = new AtomicReference<>();
        edge().withInterceptors(
                        MetadataUtils.newAttachHeadersInterceptor(headers),
                        MetadataUtils.newCaptureMetadataInterceptor(new AtomicReference<>(), trailers))
                .withDeadlineAfter(2, TimeUnit.SECONDS)
                .checkout(CheckoutRequest.newBuilder().addSkus("mixed-ledger").build());

        List<LedgerLine> lines = ledger(trailers.get());
        assertThat(lines)
                .extracting(LedgerLine::hop)
                .anySatisfy(hop -> assertThat(hop).contains("chain.v1.Edge"))
                .anySatisfy(hop -> assertThat(hop).contains("chain.v1.Pricing"))
                .anySatisfy(hop -> assertThat(hop).contains("chain.v1.Stock"));
        assertThat(lines).extracting(LedgerLine::depth).contains(0, 1, 2);
    }

    @Test
    void theCallersCriticalityCrossesTheBoot4HopToStock() {
        String before = stock.metrics();
        Metadata headers = new Metadata();
        headers.put(Metadata.Key.of("x-grpcops-criticality", Metadata.ASCII_STRING_MARSHALLER), "sheddable");
        EdgeGrpc.EdgeBlockingStub sheddable =
                edge().withInterceptors(MetadataUtils.newAttachHeadersInterceptor(headers));
        for (int i = 0; i < 5; i++) {
            sheddable
                    .withDeadlineAfter(5, TimeUnit.SECONDS)
                    .checkout(CheckoutRequest.newBuilder()
                            .addSkus("mixed-shed-" + i)
                            .build());
        }
        String after = stock.metrics();

        String sheddableLevel = "priority_level=\"sheddable\"";
        assertThat(Prometheus.sum(after, "grpc_admission_dispatched_total", sheddableLevel)
                        - Prometheus.sum(before, "grpc_admission_dispatched_total", sheddableLevel))
                .as("Checks Stock admitted as sheddable, forwarded by Edge (Boot 3) then Pricing (Boot 4)")
                .isGreaterThanOrEqualTo(5);
    }

    private static List<LedgerLine> ledger(Metadata trailers) {
        assertThat(trailers).as("the call's trailers").isNotNull();
        Iterable<String> values = trailers.getAll(LedgerLine.KEY);
        assertThat(values).as("ledger values in the trailers").isNotNull();
        return java.util.stream.StreamSupport.stream(values.spliterator(), false)
                .map(LedgerLine::parse)
                .flatMap(java.util.Optional::stream)
                .toList();
    }

    private static SkuStats stats(String sku) {
        return StockGrpc.newBlockingStub(toStock)
                .withDeadlineAfter(5, TimeUnit.SECONDS)
                .stats(StatsRequest.newBuilder().setSku(sku).build())
                .getSkus(0);
    }

    private static EdgeGrpc.EdgeBlockingStub edge() {
        return EdgeGrpc.newBlockingStub(toEdge);
    }
}
