package dev.grpcops.edge;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;
import static org.assertj.core.groups.Tuple.tuple;

import dev.grpcops.proto.chain.v1.CheckoutReply;
import dev.grpcops.proto.chain.v1.CheckoutRequest;
import dev.grpcops.proto.chain.v1.EdgeGrpc;
import dev.grpcops.proto.chain.v1.Line;
import dev.grpcops.proto.chain.v1.PricingGrpc;
import dev.grpcops.proto.chain.v1.QuoteReply;
import dev.grpcops.proto.chain.v1.QuoteRequest;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.stub.StreamObserver;
import io.micrometer.core.instrument.MeterRegistry;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import net.devh.boot.grpc.client.inject.GrpcClient;
import net.devh.boot.grpc.server.service.GrpcService;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.context.TestConfiguration;
import org.springframework.context.annotation.Bean;

/**
 * Edge over in-process gRPC, with a scripted Pricing served by the same in-process server: a
 * quote's qty echoes the delay_ms it was asked with, "down-" SKUs fail with UNAVAILABLE.
 */
@SpringBootTest(
        properties = {
            "grpc.server.in-process-name=edge-test",
            "grpc.server.port=-1",
            "grpc.client.pricing.address=in-process:edge-test",
            "grpc.client.edge.address=in-process:edge-test",
            "management.server.port=-1",
            "edge.max-skus=5",
            // Nothing here tests the drain; without this each context close would wait the default 5 s.
            "grpcops.shutdown.drain-delay=0s",
        })
class EdgeServiceTests {

    @GrpcClient("edge")
    private EdgeGrpc.EdgeBlockingStub edge;

    @Autowired
    private ScriptedPricing pricing;

    @Autowired
    private MeterRegistry registry;

    @Test
    void linesComeBackInRequestOrderAndSlowSkusAreQuotedWithTheSlowDelay() {
        CheckoutReply reply = edge.checkout(CheckoutRequest.newBuilder()
                .addSkus("e-b")
                .addSkus("e-slow")
                .addSkus("e-a")
                .setDelayMs(5)
                .addSlowSkus("e-slow")
                .build());

        assertThat(reply.getLinesList())
                .extracting(Line::getSku, Line::getAvailable, Line::getQty, Line::getReason)
                .containsExactly(tuple("e-b", true, 5, ""), tuple("e-slow", true, 3000, ""), tuple("e-a", true, 5, ""));
        assertThat(reply.getLines(0).getPriceCents()).isEqualTo(100);
    }

    @Test
    void aQuoteThatFailsBecomesAnUnavailableLineAndTheCheckoutSucceeds() {
        double before = unavailable("UNAVAILABLE");
        CheckoutReply reply = edge.checkout(
                CheckoutRequest.newBuilder().addSkus("e-ok").addSkus("down-1").build());

        assertThat(reply.getLinesList())
                .extracting(Line::getSku, Line::getAvailable, Line::getReason)
                .containsExactly(tuple("e-ok", true, ""), tuple("down-1", false, "UNAVAILABLE"));
        // No deadline: the default 2 s budget leaves room, so the UNAVAILABLE Quote was retried once.
        assertThat(pricing.calls.get("down-1")).hasValue(2);
        assertThat(unavailable("UNAVAILABLE")).isEqualTo(before + 1);
    }

    @Test
    void badInputIsRefusedAndNothingIsQuoted() {
        StatusRuntimeException invalid = catchThrowableOfType(
                StatusRuntimeException.class,
                () -> edge.checkout(CheckoutRequest.newBuilder()
                        .addSkus("a")
                        .addSkus("b")
                        .addSkus("c")
                        .addSkus("d")
                        .addSkus("e")
                        .addSkus("never-quoted")
                        .build()));

        assertThat(invalid.getStatus().getCode()).isEqualTo(Status.Code.INVALID_ARGUMENT);
        assertThat(invalid.getStatus().getDescription()).isEqualTo("skus: 6 SKUs, at most 5 allowed");
        assertThat(pricing.calls).doesNotContainKey("never-quoted");
    }

    private double unavailable(String reason) {
        var counter =
                registry.find("edge.lines.unavailable").tag("reason", reason).counter();
        return counter == null ? 0 : counter.count();
    }

    @TestConfiguration
    static class PricingForTests {

        @Bean
        @GrpcService
        ScriptedPricing scriptedPricing() {
            return new ScriptedPricing();
        }
    }

    static class ScriptedPricing extends PricingGrpc.PricingImplBase {

        final Map<String, AtomicInteger> calls = new ConcurrentHashMap<>();

        @Override
        public void quote(QuoteRequest request, StreamObserver<QuoteReply> responses) {
            calls.computeIfAbsent(request.getSku(), sku -> new AtomicInteger()).incrementAndGet();
            if (request.getSku().startsWith("down-")) {
                responses.onError(
                        Status.UNAVAILABLE.withDescription("pricing is down").asRuntimeException());
                return;
            }
            responses.onNext(QuoteReply.newBuilder()
                    .setSku(request.getSku())
                    .setPriceCents(100)
                    .setQty(request.getDelayMs())
                    .build());
            responses.onCompleted();
        }
    }
}
