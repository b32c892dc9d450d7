package dev.grpcops.retry;

import com.google.common.util.concurrent.FutureCallback;
import com.google.common.util.concurrent.Futures;
import com.google.common.util.concurrent.MoreExecutors;
import dev.grpcops.proto.chain.v1.CheckReply;
import dev.grpcops.proto.chain.v1.CheckRequest;
import dev.grpcops.proto.chain.v1.PricingGrpc;
import dev.grpcops.proto.chain.v1.QuoteReply;
import dev.grpcops.proto.chain.v1.QuoteRequest;
import dev.grpcops.proto.chain.v1.StockGrpc;
import io.grpc.Metadata;
import io.grpc.Status;
import io.grpc.stub.StreamObserver;

/** A Pricing for the in-process chains: asks Stock through {@link Retry}, passes its answer up. */
final class RetryingPricing extends PricingGrpc.PricingImplBase {

    private final StockGrpc.StockFutureStub stock;
    private final Retry retry;

    RetryingPricing(StockGrpc.StockFutureStub stock, Retry retry) {
        this.stock = stock;
        this.retry = retry;
    }

    @Override
    public void quote(QuoteRequest request, StreamObserver<QuoteReply> responses) {
        CheckRequest check = CheckRequest.newBuilder().setSku(request.getSku()).build();
        Futures.addCallback(
                retry.call(() -> stock.check(check)),
                new FutureCallback<>() {
                    @Override
                    public void onSuccess(CheckReply reply) {
                        responses.onNext(QuoteReply.newBuilder()
                                .setSku(reply.getSku())
                                .setQty(reply.getQty())
                                .build());
                        responses.onCompleted();
                    }

                    @Override
                    public void onFailure(Throwable failure) {
                        // Trailers (pushback included) go back up, as a server that passes on its backend's answer.
                        Metadata trailers = Status.trailersFromThrowable(failure);
                        responses.onError(Status.fromThrowable(failure).asRuntimeException(trailers));
                    }
                },
                MoreExecutors.directExecutor());
    }
}
