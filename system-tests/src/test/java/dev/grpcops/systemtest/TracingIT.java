package dev.grpcops.systemtest;

import static dev.grpcops.testsupport.OtlpReceiver.ms;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;
import static org.awaitility.Awaitility.await;

import dev.grpcops.proto.chain.v1.CheckReply;
import dev.grpcops.proto.chain.v1.CheckRequest;
import dev.grpcops.proto.chain.v1.CheckoutReply;
import dev.grpcops.proto.chain.v1.CheckoutRequest;
import dev.grpcops.proto.chain.v1.EdgeGrpc;
import dev.grpcops.proto.chain.v1.Line;
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
import io.grpc.Server;
import io.grpc.ServerCall;
import io.grpc.ServerCallHandler;
import io.grpc.ServerInterceptor;
import io.grpc.ServerInterceptors;
import io.grpc.netty.shaded.io.grpc.netty.NettyServerBuilder;
import io.grpc.stub.StreamObserver;
import io.opentelemetry.proto.trace.v1.Span.SpanKind;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Traces as an operator gets them: the three jars export real OTLP/HTTP into a receiver in this
 * test. One Checkout is one trace, Edge → Pricing → Stock parented hop by hop, each hop's span
 * carrying the budget it arrived with and each attempt's the deadline it was handed, equal to what
 * Stock recorded. Without an endpoint nothing is traced: no span, no trace context sent downstream.
 */
@Timeout(value = 5, unit = TimeUnit.MINUTES, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
@Order(3) // the lanes' order: junit-platform.properties
class TracingIT {

    private static final String[] TRACED = {
        "--management.tracing.sampling.probability=1.0",
        "--management.tracing.opentelemetry.export.schedule-delay=100ms"
    };

    /** The most a loaded machine may spend between two readings of one call's budget, in ms. */
    private static final double SPENT_BETWEEN_HOPS_MS = 300;

    /** {@code value} is {@code before} less {@code kept}, less at most {@link #SPENT_BETWEEN_HOPS_MS}. */
    private static void assertShrunk(String what, double value, double before, double kept) {
        assertThat(value)
                .as("%s, after %.1f ms less %.0f kept", what, before, kept)
                .isBetween(before - kept - SPENT_BETWEEN_HOPS_MS, before - kept + 1);
    }

    private static String[] traced(OtlpReceiver receiver, String... more) {
        String[] args = new String[TRACED.length + 1 + more.length];
        args[0] = "--management.otlp.tracing.endpoint=" + receiver.endpoint();
        System.arraycopy(TRACED, 0, args, 1, TRACED.length);
        System.arraycopy(more, 0, args, 1 + TRACED.length, more.length);
        return args;
    }

    @Test
    void oneCheckoutIsOneTraceWithTheBudgetAtEveryHop() throws Exception {
        // The three start at once, as ChainIT's do: each hop's channel connects once the next one listens.
        try (OtlpReceiver receiver = new OtlpReceiver(0);
                ServiceProcess stock =
                        ServiceProcess.start("stock-service", "stock-traced", "127.0.0.1", Map.of(), traced(receiver));
                ServiceProcess pricing = ServiceProcess.start(
                        "pricing-service",
                        "pricing-traced",
                        "127.0.0.1",
                        Map.of(),
                        traced(receiver, "--grpc.client.stock.address=static://" + stock.target()));
                ServiceProcess edge = ServiceProcess.start(
                        "edge-service",
                        "edge-traced",
                        "127.0.0.1",
                        Map.of(),
                        traced(receiver, "--grpc.client.pricing.address=static://" + pricing.target()))) {
            for (ServiceProcess service : List.of(stock, pricing, edge)) {
                service.awaitServing(Duration.ofSeconds(90));
            }
            checkoutAndFollowIt(receiver, stock, edge);
            whatWasNotSentOrNotAnsweredIsOnTheSpans(receiver, pricing, edge);
        }
    }

    private static void checkoutAndFollowIt(OtlpReceiver receiver, ServiceProcess stock, ServiceProcess edge)
            throws Exception {
        ManagedChannel toEdge = edge.channel();
        ManagedChannel toStock = stock.channel();
        try {
            // The first calls pay for connections and class loading; the counted one comes after.
            EdgeGrpc.newBlockingStub(toEdge)
                    .withDeadlineAfter(10, TimeUnit.SECONDS)
                    .checkout(CheckoutRequest.newBuilder().addSkus("warm").build());
            String sku = "traced-" + System.nanoTime();
            CheckoutReply reply = EdgeGrpc.newBlockingStub(toEdge)
                    .withDeadlineAfter(1500, TimeUnit.MILLISECONDS)
                    .checkout(CheckoutRequest.newBuilder().addSkus(sku).build());
            assertThat(reply.getLinesList()).extracting(Line::getAvailable).containsOnly(true);
            SkuStats recorded = StockGrpc.newBlockingStub(toStock)
                    .withDeadlineAfter(10, TimeUnit.SECONDS)
                    .stats(StatsRequest.newBuilder().setSku(sku).build())
                    .getSkus(0);

            // Stock's span of this Check, then the trace it belongs to.
            await("the trace of the Checkout")
                    .atMost(Duration.ofSeconds(30))
                    .until(() -> receiver.checkoutTrace(5000).stream()
                                            .filter(span -> span.service().equals("edge-service")
                                                    && span.kind() == SpanKind.SPAN_KIND_SERVER)
                                            .count()
                                    == 1
                            && receiver.checkoutTrace(5000).size() >= 5);
            List<ReceivedSpan> trace = receiver.checkoutTrace(5000);
            CheckoutHops hops = CheckoutHops.of(trace);
            ReceivedSpan edgeServed = hops.edgeServed();
            ReceivedSpan edgeAttempt = hops.edgeAttempt();
            ReceivedSpan pricingServed = hops.pricingServed();
            ReceivedSpan pricingAttempt = hops.pricingAttempt();
            ReceivedSpan stockServed = hops.stockServed();

            // The budget at every hop: 1.5 s in, 1.3 s handed to Pricing, 1.1 s to Stock. A budget only
            // shrinks on its way, so each hop's figure is at most the one before it (less the reserve
            // where one is kept); how much less is the time spent between, generous on a loaded machine.
            double edgeIn = ms(edgeServed, "grpcops.budget.remaining_ms");
            assertShrunk("Edge's remaining on arrival", edgeIn, 1500, 0);
            assertThat(edgeServed.attribute("grpcops.budget.reserve_ms")).isEqualTo("200.0");
            assertThat(edgeServed.attribute("grpcops.admission.level")).isEqualTo("default");
            double edgeOut = ms(edgeAttempt, "grpcops.deadline_ms");
            assertShrunk("Edge's attempt deadline", edgeOut, edgeIn, 200);
            assertThat(edgeAttempt.attribute("grpcops.attempt")).isEqualTo("0");
            double pricingIn = ms(pricingServed, "grpcops.budget.remaining_ms");
            assertShrunk("Pricing's remaining on arrival", pricingIn, edgeOut, 0);
            double pricingOut = ms(pricingAttempt, "grpcops.deadline_ms");
            assertShrunk("Pricing's attempt deadline", pricingOut, pricingIn, 200);
            double stockRecordedMs = recorded.getReceivedDeadlineS(0) * 1000;
            assertShrunk("what Stock recorded", stockRecordedMs, pricingOut, 0);
            assertThat(ms(stockServed, "grpcops.budget.remaining_ms"))
                    .as("Stock's span against what Stock recorded: %.1f ms", stockRecordedMs)
                    .isCloseTo(stockRecordedMs, within(SPENT_BETWEEN_HOPS_MS));
        } finally {
            toEdge.shutdownNow();
            toStock.shutdownNow();
        }
    }

    /** A line answered unavailable, and a call the budget could not cover, say so on their hop's span. */
    private static void whatWasNotSentOrNotAnsweredIsOnTheSpans(
            OtlpReceiver receiver, ServiceProcess pricing, ServiceProcess edge) {
        ManagedChannel toEdge = edge.channel();
        ManagedChannel toPricing = pricing.channel();
        try {
            EdgeGrpc.newBlockingStub(toEdge)
                    .withDeadlineAfter(1000, TimeUnit.MILLISECONDS)
                    .checkout(CheckoutRequest.newBuilder()
                            .addSkus("quick")
                            .addSkus("slow")
                            .addSlowSkus("slow")
                            .build());
            io.grpc.StatusRuntimeException refused = org.assertj.core.api.Assertions.catchThrowableOfType(
                    io.grpc.StatusRuntimeException.class,
                    () -> PricingGrpc.newBlockingStub(toPricing)
                            .withDeadlineAfter(450, TimeUnit.MILLISECONDS)
                            .quote(QuoteRequest.newBuilder().setSku("too-late").build()));
            assertThat(refused.getStatus().getCode()).isEqualTo(io.grpc.Status.Code.DEADLINE_EXCEEDED);

            await("the spans that say so").atMost(Duration.ofSeconds(30)).untilAsserted(() -> {
                assertThat(receiver.spans).anySatisfy(span -> {
                    assertThat(span.service()).isEqualTo("edge-service");
                    assertThat(span.attribute("grpcops.lines.unavailable")).isEqualTo("{DEADLINE_EXCEEDED=1}");
                });
                assertThat(receiver.spans).anySatisfy(span -> {
                    assertThat(span.service()).isEqualTo("pricing-service");
                    assertThat(span.kind()).isEqualTo(SpanKind.SPAN_KIND_SERVER);
                    assertThat(span.attribute("grpcops.budget.not_sent")).isEqualTo("chain.v1.Stock/Check");
                });
            });
        } finally {
            toEdge.shutdownNow();
            toPricing.shutdownNow();
        }
    }

    /** Without an endpoint there is no tracing at all: Pricing sends no trace context to its Stock. */
    @Test
    void withoutAnEndpointNothingIsTracedOrSent() throws Exception {
        Metadata.Key<String> traceparent = Metadata.Key.of("traceparent", Metadata.ASCII_STRING_MARSHALLER);
        // Two Pricings side by side, without tracing and with it, each in front of its own fake Stock.
        List<Metadata> untraced = new CopyOnWriteArrayList<>();
        List<Metadata> traced = new CopyOnWriteArrayList<>();
        Server stockOfUntraced = fakeStock(untraced);
        Server stockOfTraced = fakeStock(traced);
        try (OtlpReceiver receiver = new OtlpReceiver(0);
                ServiceProcess pricingOff = ServiceProcess.start(
                        "pricing-service",
                        "pricing-off",
                        "127.0.0.1",
                        Map.of(),
                        "--grpc.client.stock.address=static://127.0.0.1:" + stockOfUntraced.getPort());
                ServiceProcess pricingOn = ServiceProcess.start(
                        "pricing-service",
                        "pricing-on",
                        "127.0.0.1",
                        Map.of(),
                        traced(
                                receiver,
                                "--grpc.client.stock.address=static://127.0.0.1:" + stockOfTraced.getPort()))) {
            for (ServiceProcess pricing : List.of(pricingOff, pricingOn)) {
                pricing.awaitServing(Duration.ofSeconds(90));
                ManagedChannel channel = pricing.channel();
                try {
                    PricingGrpc.newBlockingStub(channel)
                            .withDeadlineAfter(10, TimeUnit.SECONDS)
                            .quote(QuoteRequest.newBuilder().setSku("untraced").build());
                } finally {
                    channel.shutdownNow();
                }
            }
            assertThat(untraced).hasSize(1);
            assertThat(untraced.get(0).containsKey(traceparent))
                    .as("trace context sent, tracing off")
                    .isFalse();
            assertThat(traced).hasSize(1);
            assertThat(traced.get(0).containsKey(traceparent))
                    .as("trace context sent, tracing on")
                    .isTrue();
        } finally {
            stockOfUntraced.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
            stockOfTraced.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
        }
    }

    /** A Stock that answers every Check with one unit and keeps the headers each call came with. */
    private static Server fakeStock(List<Metadata> received) throws java.io.IOException {
        return NettyServerBuilder.forAddress(new InetSocketAddress("127.0.0.1", 0))
                .addService(ServerInterceptors.intercept(
                        new StockGrpc.StockImplBase() {
                            @Override
                            public void check(CheckRequest request, StreamObserver<CheckReply> responses) {
                                responses.onNext(CheckReply.newBuilder()
                                        .setSku(request.getSku())
                                        .setQty(1)
                                        .build());
                                responses.onCompleted();
                            }
                        },
                        new ServerInterceptor() {
                            @Override
                            public <ReqT, RespT> ServerCall.Listener<ReqT> interceptCall(
                                    ServerCall<ReqT, RespT> call,
                                    Metadata headers,
                                    ServerCallHandler<ReqT, RespT> next) {
                                received.add(headers);
                                return next.startCall(call, headers);
                            }
                        }))
                .build()
                .start();
    }
}
