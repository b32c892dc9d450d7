package dev.grpcops.bench;

import com.google.common.util.concurrent.FutureCallback;
import com.google.common.util.concurrent.Futures;
import com.google.common.util.concurrent.MoreExecutors;
import dev.grpcops.proto.chain.v1.CheckReply;
import dev.grpcops.proto.chain.v1.CheckRequest;
import dev.grpcops.proto.chain.v1.PricingGrpc;
import dev.grpcops.proto.chain.v1.QuoteReply;
import dev.grpcops.proto.chain.v1.QuoteRequest;
import dev.grpcops.proto.chain.v1.StockGrpc;
import io.grpc.Context;
import io.grpc.Deadline;
import io.grpc.ManagedChannel;
import io.grpc.Status;
import io.grpc.stub.StreamObserver;

/**
 * Pricing: Quote asks Stock under the budget rules (deadline remaining − reserve, or
 * DEADLINE_EXCEEDED without calling when too little is left) and answers price 1200 with
 * Stock's qty; a Stock error ends the Quote with the same code and description.
 */
final class BenchPricing extends PricingGrpc.PricingImplBase {

    static final long PRICE_CENTS = 1200;

    private final StockGrpc.StockFutureStub stock;

    BenchPricing(StockGrpc.StockFutureStub stock) {
        this.stock = stock;
    }

    static void main(String[] args) throws Exception {
        if (args.length != 2) {
            throw new IllegalArgumentException("usage: pricing PORT STOCK_TARGET");
        }
        ManagedChannel channel = Servers.channel(args[1]);
        Servers.serve(
                "pricing",
                Servers.port(args[0]),
                new BenchPricing(StockGrpc.newFutureStub(channel)),
                channel::shutdownNow);
    }

    @Override
    public void quote(QuoteRequest request, StreamObserver<QuoteReply> responses) {
        Deadline budget = BudgetRules.arrival(Context.current().getDeadline());
        Deadline downstream = BudgetRules.downstream(budget);
        if (downstream == null) {
            responses.onError(Status.DEADLINE_EXCEEDED
                    .withDescription("chain.v1.Stock/Check not sent: budget too small")
                    .asRuntimeException());
            return;
        }
        CheckRequest check = CheckRequest.newBuilder()
                .setSku(request.getSku())
                .setDelayMs(request.getDelayMs())
                .build();
        Futures.addCallback(
                stock.withDeadline(downstream).check(check),
                new FutureCallback<>() {
                    @Override
                    public void onSuccess(CheckReply reply) {
                        responses.onNext(QuoteReply.newBuilder()
                                .setSku(request.getSku())
                                .setPriceCents(PRICE_CENTS)
                                .setQty(reply.getQty())
                                .build());
                        responses.onCompleted();
                    }

                    @Override
                    public void onFailure(Throwable failure) {
                        Status status = Status.fromThrowable(failure);
                        responses.onError(Status.fromCode(status.getCode())
                                .withDescription(status.getDescription())
                                .asRuntimeException());
                    }
                },
                MoreExecutors.directExecutor());
    }
}
