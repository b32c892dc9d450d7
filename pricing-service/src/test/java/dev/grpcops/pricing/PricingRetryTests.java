package dev.grpcops.pricing;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

import dev.grpcops.proto.chain.v1.CheckReply;
import dev.grpcops.proto.chain.v1.CheckRequest;
import dev.grpcops.proto.chain.v1.PricingGrpc;
import dev.grpcops.proto.chain.v1.QuoteRequest;
import dev.grpcops.proto.chain.v1.StockGrpc;
import io.grpc.Metadata;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.stub.MetadataUtils;
import io.grpc.stub.StreamObserver;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import net.devh.boot.grpc.client.inject.GrpcClient;
import net.devh.boot.grpc.server.service.GrpcService;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.context.TestConfiguration;
import org.springframework.context.annotation.Bean;

/** pricing.retry-stock: Pricing retries Stock through Retry, but never under a Quote that arrived as a retry. */
@SpringBootTest(
        properties = {
            "grpc.server.in-process-name=pricing-retry-test",
            "grpc.server.port=-1",
            "grpc.client.stock.address=in-process:pricing-retry-test",
            "grpc.client.pricing.address=in-process:pricing-retry-test",
            "management.server.port=-1",
            "pricing.retry-stock=true",
            "grpcops.shutdown.drain-delay=0s",
        })
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class PricingRetryTests {

    /** gRFC A6's header: the attempt number of a retry or hedge. */
    private static final Metadata.Key<String> PREVIOUS_ATTEMPTS =
            Metadata.Key.of("grpc-previous-rpc-attempts", Metadata.ASCII_STRING_MARSHALLER);

    @GrpcClient("pricing")
    private PricingGrpc.PricingBlockingStub pricing;

    @Autowired
    private DownStock stock;

    @Test
    void aStockCallThatFailedUnavailableIsRetriedWithinTheBudget() {
        StatusRuntimeException failed = catchThrowableOfType(
                StatusRuntimeException.class,
                () -> pricing.withDeadlineAfter(1500, TimeUnit.MILLISECONDS)
                        .quote(QuoteRequest.newBuilder().setSku("first").build()));

        assertThat(failed.getStatus().getCode()).isEqualTo(Status.Code.UNAVAILABLE);
        assertThat(stock.calls("first")).containsExactly("", "1");
    }

    @Test
    void aQuoteThatArrivedAsARetryIsNotRetriedAgain() {
        Metadata retry = new Metadata();
        retry.put(PREVIOUS_ATTEMPTS, "1");
        StatusRuntimeException failed = catchThrowableOfType(
                StatusRuntimeException.class,
                () -> pricing.withInterceptors(MetadataUtils.newAttachHeadersInterceptor(retry))
                        .withDeadlineAfter(1500, TimeUnit.MILLISECONDS)
                        .quote(QuoteRequest.newBuilder().setSku("second").build()));

        assertThat(failed.getStatus().getCode()).isEqualTo(Status.Code.UNAVAILABLE);
        assertThat(stock.calls("second")).containsExactly("");
    }

    @TestConfiguration
    static class StockForTests {

        @Bean
        @GrpcService(interceptors = PreviousAttemptsRecorder.class)
        DownStock downStock() {
            return new DownStock();
        }

        @Bean
        PreviousAttemptsRecorder previousAttemptsRecorder() {
            return new PreviousAttemptsRecorder();
        }
    }

    /** Records the grpc-previous-rpc-attempts header of each Stock call ("" for none) in the call's thread. */
    static class PreviousAttemptsRecorder implements io.grpc.ServerInterceptor {
        static final io.grpc.Context.Key<String> ATTEMPTS = io.grpc.Context.key("previous-attempts");

        @Override
        public <ReqT, RespT> io.grpc.ServerCall.Listener<ReqT> interceptCall(
                io.grpc.ServerCall<ReqT, RespT> call, Metadata headers, io.grpc.ServerCallHandler<ReqT, RespT> next) {
            String attempts = headers.get(PREVIOUS_ATTEMPTS);
            return io.grpc.Contexts.interceptCall(
                    io.grpc.Context.current().withValue(ATTEMPTS, attempts == null ? "" : attempts),
                    call,
                    headers,
                    next);
        }
    }

    /** A Stock that is down for every SKU: UNAVAILABLE, recording each call's previous-attempts header. */
    static class DownStock extends StockGrpc.StockImplBase {

        private final List<String[]> received = new CopyOnWriteArrayList<>();

        List<String> calls(String sku) {
            return received.stream()
                    .filter(r -> r[0].equals(sku))
                    .map(r -> r[1])
                    .toList();
        }

        @Override
        public void check(CheckRequest request, StreamObserver<CheckReply> responses) {
            received.add(new String[] {request.getSku(), PreviousAttemptsRecorder.ATTEMPTS.get()});
            responses.onError(
                    Status.UNAVAILABLE.withDescription("stock is down").asRuntimeException());
        }
    }
}
