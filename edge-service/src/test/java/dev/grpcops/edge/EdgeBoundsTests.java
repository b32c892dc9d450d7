package dev.grpcops.edge;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.groups.Tuple.tuple;

import com.google.common.util.concurrent.ListenableFuture;
import dev.grpcops.proto.chain.v1.CheckoutReply;
import dev.grpcops.proto.chain.v1.CheckoutRequest;
import dev.grpcops.proto.chain.v1.EdgeGrpc;
import dev.grpcops.proto.chain.v1.Line;
import dev.grpcops.proto.chain.v1.PricingGrpc;
import dev.grpcops.proto.chain.v1.QuoteReply;
import dev.grpcops.proto.chain.v1.QuoteRequest;
import io.grpc.stub.ServerCallStreamObserver;
import io.grpc.stub.StreamObserver;
import io.micrometer.core.instrument.MeterRegistry;
import java.time.Duration;
import java.util.Map;
import java.util.Queue;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import net.devh.boot.grpc.client.inject.GrpcClient;
import net.devh.boot.grpc.server.service.GrpcService;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.context.TestConfiguration;
import org.springframework.context.annotation.Bean;

/**
 * Edge's bounds on what it sends downstream, over in-process gRPC with a Pricing that holds
 * "held-" SKUs until told to answer: at most edge.max-quotes-in-flight Quotes out at once, each
 * SKU quoted once per Checkout, and a caller that leaves is not counted as unavailable lines.
 */
@SpringBootTest(
        properties = {
            "grpc.server.in-process-name=edge-bounds-test",
            "grpc.server.port=-1",
            "grpc.client.pricing.address=in-process:edge-bounds-test",
            "grpc.client.edge.address=in-process:edge-bounds-test",
            "management.server.port=-1",
            "edge.max-quotes-in-flight=2",
            "grpcops.shutdown.drain-delay=0s",
        })
@Timeout(60)
class EdgeBoundsTests {

    @GrpcClient("edge")
    private EdgeGrpc.EdgeFutureStub edge;

    @Autowired
    private HoldingPricing pricing;

    @Autowired
    private MeterRegistry registry;

    @AfterEach
    void answerEverythingHeld() {
        pricing.answerHeld();
        Awaitility.await().atMost(Duration.ofSeconds(10)).until(() -> quotesInFlight() == 0);
    }

    @Test
    void aSkuAskedForTwiceIsQuotedOnceAndAnsweredTwice() throws Exception {
        CheckoutReply reply = edge.checkout(CheckoutRequest.newBuilder()
                        .addSkus("dup")
                        .addSkus("other")
                        .addSkus("dup")
                        .build())
                .get(10, TimeUnit.SECONDS);

        assertThat(reply.getLinesList())
                .extracting(Line::getSku, Line::getAvailable)
                .containsExactly(tuple("dup", true), tuple("other", true), tuple("dup", true));
        assertThat(pricing.calls.get("dup")).hasValue(1);
    }

    @Test
    void beyondTheBoundALineIsResourceExhaustedAtOnce() throws Exception {
        ListenableFuture<CheckoutReply> holding = edge.checkout(
                CheckoutRequest.newBuilder().addSkus("held-1").addSkus("held-2").build());
        Awaitility.await().atMost(Duration.ofSeconds(10)).until(() -> pricing.held.size() == 2);
        double before = unavailable("RESOURCE_EXHAUSTED");

        CheckoutReply refused = edge.checkout(
                        CheckoutRequest.newBuilder().addSkus("one-more").build())
                .get(10, TimeUnit.SECONDS);

        assertThat(refused.getLinesList())
                .extracting(Line::getSku, Line::getAvailable, Line::getReason)
                .containsExactly(tuple("one-more", false, "RESOURCE_EXHAUSTED"));
        assertThat(pricing.calls).doesNotContainKey("one-more");
        assertThat(unavailable("RESOURCE_EXHAUSTED")).isEqualTo(before + 1);

        pricing.answerHeld();
        assertThat(holding.get(10, TimeUnit.SECONDS).getLinesList())
                .extracting(Line::getAvailable)
                .containsOnly(true);
        Awaitility.await().atMost(Duration.ofSeconds(10)).until(() -> quotesInFlight() == 0);
        assertThat(edge.checkout(
                                CheckoutRequest.newBuilder().addSkus("one-more").build())
                        .get(10, TimeUnit.SECONDS)
                        .getLines(0)
                        .getAvailable())
                .as("places are given back")
                .isTrue();
    }

    @Test
    void aCallerThatLeavesIsNotCountedAsUnavailableLines() {
        double before = unavailable("CANCELLED");
        ListenableFuture<CheckoutReply> leaving =
                edge.checkout(CheckoutRequest.newBuilder().addSkus("held-3").build());
        Awaitility.await().atMost(Duration.ofSeconds(10)).until(() -> pricing.held.size() == 1);

        leaving.cancel(true);

        Awaitility.await().atMost(Duration.ofSeconds(10)).until(() -> pricing.cancelled.get() == 1);
        Awaitility.await().atMost(Duration.ofSeconds(10)).until(() -> quotesInFlight() == 0);
        assertThat(unavailable("CANCELLED")).isEqualTo(before);
    }

    private double unavailable(String reason) {
        var counter =
                registry.find("edge.lines.unavailable").tag("reason", reason).counter();
        return counter == null ? 0 : counter.count();
    }

    private double quotesInFlight() {
        return registry.get("edge.quotes.in.flight").gauge().value();
    }

    @TestConfiguration
    static class PricingForTests {

        @Bean
        @GrpcService
        HoldingPricing holdingPricing() {
            return new HoldingPricing();
        }
    }

    static class HoldingPricing extends PricingGrpc.PricingImplBase {

        final Map<String, AtomicInteger> calls = new ConcurrentHashMap<>();
        final Queue<Runnable> held = new ConcurrentLinkedQueue<>();
        final AtomicInteger cancelled = new AtomicInteger();

        @Override
        public void quote(QuoteRequest request, StreamObserver<QuoteReply> responses) {
            calls.computeIfAbsent(request.getSku(), sku -> new AtomicInteger()).incrementAndGet();
            QuoteReply reply = QuoteReply.newBuilder()
                    .setSku(request.getSku())
                    .setPriceCents(100)
                    .build();
            if (!request.getSku().startsWith("held-")) {
                responses.onNext(reply);
                responses.onCompleted();
                return;
            }
            ServerCallStreamObserver<QuoteReply> call = (ServerCallStreamObserver<QuoteReply>) responses;
            Runnable answer = () -> {
                if (!call.isCancelled()) {
                    call.onNext(reply);
                    call.onCompleted();
                }
            };
            call.setOnCancelHandler(() -> {
                held.remove(answer);
                cancelled.incrementAndGet();
            });
            held.add(answer);
        }

        void answerHeld() {
            for (Runnable answer; (answer = held.poll()) != null; ) {
                answer.run();
            }
        }
    }
}
