package dev.grpcops.pricing;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

import dev.grpcops.proto.chain.v1.CheckReply;
import dev.grpcops.proto.chain.v1.CheckRequest;
import dev.grpcops.proto.chain.v1.PricingGrpc;
import dev.grpcops.proto.chain.v1.QuoteReply;
import dev.grpcops.proto.chain.v1.QuoteRequest;
import dev.grpcops.proto.chain.v1.StockGrpc;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.stub.StreamObserver;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import net.devh.boot.grpc.client.inject.GrpcClient;
import net.devh.boot.grpc.server.service.GrpcService;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.context.TestConfiguration;
import org.springframework.context.annotation.Bean;

/** Pricing over in-process gRPC, with a recording Stock served by the same in-process server. */
@SpringBootTest(
        properties = {
            "grpc.server.in-process-name=pricing-test",
            "grpc.server.port=-1",
            "grpc.client.stock.address=in-process:pricing-test",
            "grpc.client.pricing.address=in-process:pricing-test",
            "management.server.port=-1",
            "pricing.price-cents=999",
            // Nothing here tests the drain; without this each context close would wait the default 5 s.
            "grpcops.shutdown.drain-delay=0s",
        })
class PricingServiceTests {

    @GrpcClient("pricing")
    private PricingGrpc.PricingBlockingStub pricing;

    @Autowired
    private RecordingStock stock;

    @Test
    void quoteIsTheConfiguredPriceAndStocksQuantity() {
        QuoteReply reply = pricing.quote(
                QuoteRequest.newBuilder().setSku("p-1").setDelayMs(7).build());

        assertThat(reply.getSku()).isEqualTo("p-1");
        assertThat(reply.getPriceCents()).isEqualTo(999);
        assertThat(reply.getQty()).isEqualTo(42);
        assertThat(stock.received).anySatisfy(check -> {
            assertThat(check.getSku()).isEqualTo("p-1");
            assertThat(check.getDelayMs()).isEqualTo(7);
        });
    }

    @Test
    void stockErrorEndsTheQuoteWithTheSameCodeAndDescription() {
        StatusRuntimeException failed = catchThrowableOfType(
                StatusRuntimeException.class,
                () -> pricing.quote(QuoteRequest.newBuilder().setSku("broken").build()));

        assertThat(failed.getStatus().getCode()).isEqualTo(Status.Code.RESOURCE_EXHAUSTED);
        assertThat(failed.getStatus().getDescription()).isEqualTo("stock says no");
    }

    @Test
    void badInputNeverReachesStock() {
        int before = stock.received.size();
        StatusRuntimeException invalid = catchThrowableOfType(
                StatusRuntimeException.class,
                () -> pricing.quote(QuoteRequest.newBuilder()
                        .setSku("ok")
                        .setDelayMs(70_000)
                        .build()));

        assertThat(invalid.getStatus().getCode()).isEqualTo(Status.Code.INVALID_ARGUMENT);
        assertThat(invalid.getStatus().getDescription()).isEqualTo("delay_ms: must be 0-60000, got 70000");
        assertThat(stock.received).hasSize(before);
    }

    @TestConfiguration
    static class StockForTests {

        @Bean
        @GrpcService
        RecordingStock recordingStock() {
            return new RecordingStock();
        }
    }

    static class RecordingStock extends StockGrpc.StockImplBase {

        final List<CheckRequest> received = new CopyOnWriteArrayList<>();

        @Override
        public void check(CheckRequest request, StreamObserver<CheckReply> responses) {
            received.add(request);
            if (request.getSku().equals("broken")) {
                responses.onError(Status.RESOURCE_EXHAUSTED
                        .withDescription("stock says no")
                        .asRuntimeException());
                return;
            }
            responses.onNext(
                    CheckReply.newBuilder().setSku(request.getSku()).setQty(42).build());
            responses.onCompleted();
        }
    }
}
