package dev.grpcops.pricing;

import com.google.common.util.concurrent.FutureCallback;
import com.google.common.util.concurrent.Futures;
import com.google.common.util.concurrent.ListenableFuture;
import com.google.common.util.concurrent.MoreExecutors;
import dev.grpcops.chain.ChainInput;
import dev.grpcops.client.CallOutcome;
import dev.grpcops.proto.chain.v1.CheckReply;
import dev.grpcops.proto.chain.v1.CheckRequest;
import dev.grpcops.proto.chain.v1.PricingGrpc;
import dev.grpcops.proto.chain.v1.QuoteReply;
import dev.grpcops.proto.chain.v1.QuoteRequest;
import dev.grpcops.proto.chain.v1.StockGrpc;
import dev.grpcops.retry.Retry;
import io.grpc.stub.StreamObserver;
import net.devh.boot.grpc.server.service.GrpcService;

/**
 * Quote asks Stock without holding a thread while it waits. The budget library gives the Stock
 * call its deadline (remaining − reserve) or refuses to send it; either way Stock's status and
 * description come back to the caller unchanged. A Check with no answer after the learned delay is
 * hedged on another Stock replica. With {@code pricing.retry-stock} it is also retried once on
 * UNAVAILABLE when every rule allows; neither happens under a Quote that arrived as Edge's retry or
 * hedge (only one hop does).
 */
@GrpcService
class PricingService extends PricingGrpc.PricingImplBase {

    private final StockGrpc.StockFutureStub stock;
    private final PricingProperties properties;
    private final Retry retry;

    PricingService(StockGrpc.StockFutureStub stock, PricingProperties properties, Retry retry) {
        this.stock = stock;
        this.properties = properties;
        this.retry = retry;
    }

    @Override
    public void quote(QuoteRequest request, StreamObserver<QuoteReply> responses) {
        ChainInput.check(request);
        CheckRequest check = CheckRequest.newBuilder()
                .setSku(request.getSku())
                .setDelayMs(request.getDelayMs())
                .build();
        ListenableFuture<CheckReply> reply = properties.retryStock()
                ? retry.hedged(() -> stock.check(check))
                : retry.hedgeOnly(() -> stock.check(check));
        Futures.addCallback(
                reply,
                new FutureCallback<>() {
                    @Override
                    public void onSuccess(CheckReply reply) {
                        responses.onNext(QuoteReply.newBuilder()
                                .setSku(request.getSku())
                                .setPriceCents(properties.priceCents())
                                .setQty(reply.getQty())
                                .build());
                        responses.onCompleted();
                    }

                    /**
                     * Stock's code and description, marked as relayed: Edge then does not count
                     * Stock's failure against this Pricing replica (a healthy middle tier is not ejected).
                     */
                    @Override
                    public void onFailure(Throwable failure) {
                        responses.onError(CallOutcome.relay(failure));
                    }
                },
                MoreExecutors.directExecutor());
    }
}
