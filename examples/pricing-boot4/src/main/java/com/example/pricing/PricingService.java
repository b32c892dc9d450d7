package com.example.pricing;

import dev.grpcops.client.CallOutcome;
import dev.grpcops.proto.chain.v1.CheckReply;
import dev.grpcops.proto.chain.v1.CheckRequest;
import dev.grpcops.proto.chain.v1.PricingGrpc;
import dev.grpcops.proto.chain.v1.QuoteReply;
import dev.grpcops.proto.chain.v1.QuoteRequest;
import dev.grpcops.proto.chain.v1.StockGrpc;
import io.grpc.Channel;
import io.grpc.Status;
import io.grpc.stub.StreamObserver;
import java.util.function.Supplier;

/**
 * Quote asks Stock through Spring gRPC's channel "stock" without holding a thread. The starter gives
 * that call the served call's budget less the reserve, forwards the caller's criticality, and
 * passes the budget ledger back: nothing here names any of it.
 */
class PricingService extends PricingGrpc.PricingImplBase {

    static final long PRICE_CENTS = 1200;

    private final Supplier<Channel> stockChannel;
    private volatile StockGrpc.StockStub stock;

    PricingService(Supplier<Channel> stockChannel) {
        this.stockChannel = stockChannel;
    }

    @Override
    public void quote(QuoteRequest request, StreamObserver<QuoteReply> responses) {
        if (request.getSku().isBlank()) {
            responses.onError(Status.INVALID_ARGUMENT.withDescription("sku: required").asRuntimeException());
            return;
        }
        if (stock == null) {
            stock = StockGrpc.newStub(stockChannel.get());
        }
        CheckRequest check = CheckRequest.newBuilder()
                .setSku(request.getSku())
                .setDelayMs(request.getDelayMs())
                .build();
        stock.check(check, new StreamObserver<>() {
            @Override
            public void onNext(CheckReply reply) {
                responses.onNext(QuoteReply.newBuilder()
                        .setSku(request.getSku())
                        .setPriceCents(PRICE_CENTS)
                        .setQty(reply.getQty())
                        .build());
            }

            /** Stock's code and description, marked as relayed (a healthy middle tier is not ejected). */
            @Override
            public void onError(Throwable failure) {
                responses.onError(CallOutcome.relay(failure));
            }

            @Override
            public void onCompleted() {
                responses.onCompleted();
            }
        });
    }
}
