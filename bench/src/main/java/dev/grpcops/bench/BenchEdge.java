package dev.grpcops.bench;

import com.google.common.util.concurrent.FutureCallback;
import com.google.common.util.concurrent.Futures;
import com.google.common.util.concurrent.MoreExecutors;
import dev.grpcops.proto.chain.v1.CheckoutReply;
import dev.grpcops.proto.chain.v1.CheckoutRequest;
import dev.grpcops.proto.chain.v1.EdgeGrpc;
import dev.grpcops.proto.chain.v1.Line;
import dev.grpcops.proto.chain.v1.PricingGrpc;
import dev.grpcops.proto.chain.v1.QuoteReply;
import dev.grpcops.proto.chain.v1.QuoteRequest;
import io.grpc.Context;
import io.grpc.Deadline;
import io.grpc.ManagedChannel;
import io.grpc.Status;
import io.grpc.stub.StreamObserver;
import java.util.HashSet;
import java.util.Set;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Edge: Checkout quotes every SKU at once (future stubs), each Quote under the same budget,
 * retries a Quote that failed with UNAVAILABLE once if remaining − reserve ≥ RETRY_MIN, and
 * answers the lines in request order, a failed Quote as an unavailable line with the code name.
 * A SKU in slow_skus is quoted with delay_ms 3000.
 */
final class BenchEdge extends EdgeGrpc.EdgeImplBase {

    static final int SLOW_DELAY_MS = 3000;

    private final PricingGrpc.PricingFutureStub pricing;

    BenchEdge(PricingGrpc.PricingFutureStub pricing) {
        this.pricing = pricing;
    }

    static void main(String[] args) throws Exception {
        if (args.length != 2) {
            throw new IllegalArgumentException("usage: edge PORT PRICING_TARGET");
        }
        ManagedChannel channel = Servers.channel(args[1]);
        Servers.serve(
                "edge", Servers.port(args[0]), new BenchEdge(PricingGrpc.newFutureStub(channel)), channel::shutdownNow);
    }

    @Override
    public void checkout(CheckoutRequest request, StreamObserver<CheckoutReply> responses) {
        Checkout checkout = new Checkout(request, responses);
        if (request.getSkusCount() == 0) {
            checkout.answer();
            return;
        }
        Set<String> slow = request.getSlowSkusCount() == 0 ? Set.of() : new HashSet<>(request.getSlowSkusList());
        for (int i = 0; i < request.getSkusCount(); i++) {
            String sku = request.getSkus(i);
            int delayMs = slow.contains(sku) ? SLOW_DELAY_MS : request.getDelayMs();
            quote(
                    checkout,
                    i,
                    QuoteRequest.newBuilder().setSku(sku).setDelayMs(delayMs).build(),
                    true);
        }
    }

    private void quote(Checkout checkout, int index, QuoteRequest quote, boolean firstAttempt) {
        Deadline downstream = BudgetRules.downstream(checkout.budget);
        if (downstream == null) {
            checkout.line(index, unavailable(quote.getSku(), Status.Code.DEADLINE_EXCEEDED));
            return;
        }
        Futures.addCallback(
                pricing.withDeadline(downstream).quote(quote),
                new FutureCallback<>() {
                    @Override
                    public void onSuccess(QuoteReply reply) {
                        checkout.line(
                                index,
                                Line.newBuilder()
                                        .setSku(quote.getSku())
                                        .setAvailable(true)
                                        .setPriceCents(reply.getPriceCents())
                                        .setQty(reply.getQty())
                                        .build());
                    }

                    @Override
                    public void onFailure(Throwable failure) {
                        Status.Code code = Status.fromThrowable(failure).getCode();
                        if (firstAttempt
                                && code == Status.Code.UNAVAILABLE
                                && !checkout.served.isCancelled()
                                && BudgetRules.allowsRetry(checkout.budget)) {
                            // In the served call's context, so that the retry too ends when the caller goes.
                            checkout.served.run(() -> quote(checkout, index, quote, false));
                            return;
                        }
                        checkout.line(
                                index,
                                unavailable(quote.getSku(), code == Status.Code.OK ? Status.Code.UNKNOWN : code));
                    }
                },
                MoreExecutors.directExecutor());
    }

    private static Line unavailable(String sku, Status.Code reason) {
        return Line.newBuilder()
                .setSku(sku)
                .setAvailable(false)
                .setReason(reason.name())
                .build();
    }

    /** One Checkout being answered: its budget, and its lines as they come in. */
    private static final class Checkout {

        final Context served = Context.current();
        final Deadline budget = BudgetRules.arrival(served.getDeadline());
        private final Line[] lines;
        private final AtomicInteger missing;
        private final StreamObserver<CheckoutReply> responses;

        Checkout(CheckoutRequest request, StreamObserver<CheckoutReply> responses) {
            this.lines = new Line[request.getSkusCount()];
            this.missing = new AtomicInteger(lines.length);
            this.responses = responses;
        }

        void line(int index, Line line) {
            lines[index] = line; // published by the decrement below
            if (missing.decrementAndGet() == 0) {
                answer();
            }
        }

        void answer() {
            if (served.isCancelled()) {
                return; // the caller has gone: nobody to answer
            }
            CheckoutReply.Builder reply = CheckoutReply.newBuilder();
            for (Line line : lines) {
                reply.addLines(line);
            }
            responses.onNext(reply.build());
            responses.onCompleted();
        }
    }
}
