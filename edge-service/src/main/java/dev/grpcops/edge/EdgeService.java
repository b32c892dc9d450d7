package dev.grpcops.edge;

import com.google.common.util.concurrent.Futures;
import com.google.common.util.concurrent.ListenableFuture;
import com.google.common.util.concurrent.MoreExecutors;
import dev.grpcops.budget.BudgetRetry;
import dev.grpcops.chain.ChainInput;
import dev.grpcops.proto.chain.v1.CheckoutReply;
import dev.grpcops.proto.chain.v1.CheckoutRequest;
import dev.grpcops.proto.chain.v1.EdgeGrpc;
import dev.grpcops.proto.chain.v1.Line;
import dev.grpcops.proto.chain.v1.PricingGrpc;
import dev.grpcops.proto.chain.v1.QuoteReply;
import dev.grpcops.proto.chain.v1.QuoteRequest;
import io.grpc.Context;
import io.grpc.Status;
import io.grpc.stub.StreamObserver;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import java.util.EnumMap;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import net.devh.boot.grpc.server.service.GrpcService;

/**
 * Checkout quotes every SKU at once, each Quote under the same budget (the library hands each
 * one remaining − reserve), and retries a Quote that failed with UNAVAILABLE once if the budget
 * allows. A SKU that could not be quoted becomes an unavailable line; the Checkout still succeeds.
 */
@GrpcService
class EdgeService extends EdgeGrpc.EdgeImplBase {

    private final PricingGrpc.PricingFutureStub pricing;
    private final BudgetRetry retry;
    private final EdgeProperties properties;
    private final QuotesInFlight inFlight;
    /** One counter per status code, built up front: a failed line costs an increment, not a meter look-up. */
    private final Map<Status.Code, Counter> unavailableLines = new EnumMap<>(Status.Code.class);

    EdgeService(PricingGrpc.PricingFutureStub pricing, BudgetRetry retry, EdgeProperties properties,
            MeterRegistry registry) {
        this.pricing = pricing;
        this.retry = retry;
        this.properties = properties;
        this.inFlight = new QuotesInFlight(properties.maxQuotesInFlight(), registry);
        for (Status.Code code : Status.Code.values()) {
            if (code != Status.Code.OK) {
                unavailableLines.put(code, Counter.builder("edge.lines.unavailable")
                        .description("Checkout lines answered as unavailable, by the status code that made them so")
                        .tag("reason", code.name())
                        .register(registry));
            }
        }
    }

    @Override
    public void checkout(CheckoutRequest request, StreamObserver<CheckoutReply> responses) {
        ChainInput.check(request, properties.maxSkus());
        Context served = Context.current();
        Set<String> slow = Set.copyOf(request.getSlowSkusList());
        int slowDelayMs = (int) properties.slowDelay().toMillis();
        // A SKU asked for twice is quoted once; every requested line is answered, in request order.
        Map<String, ListenableFuture<Line>> quoted = new HashMap<>();
        List<ListenableFuture<Line>> lines = request.getSkusList().stream()
                .map(sku -> quoted.computeIfAbsent(sku,
                        s -> line(s, slow.contains(s) ? slowDelayMs : request.getDelayMs(), served)))
                .toList();
        // Every line future succeeds (failures became unavailable lines), so this completes
        // when the slowest Quote has answered or run out of budget.
        Futures.whenAllSucceed(quoted.values()).run(() -> {
            if (served.isCancelled()) {
                return; // the caller has gone (cancelled, or its deadline passed): nobody to answer
            }
            responses.onNext(CheckoutReply.newBuilder().addAllLines(lines.stream().map(Futures::getUnchecked).toList())
                    .build());
            responses.onCompleted();
        }, MoreExecutors.directExecutor());
    }

    private ListenableFuture<Line> line(String sku, int delayMs, Context served) {
        if (!inFlight.tryAcquire()) {
            return Futures.immediateFuture(unavailable(sku, Status.Code.RESOURCE_EXHAUSTED));
        }
        QuoteRequest quote = QuoteRequest.newBuilder().setSku(sku).setDelayMs(delayMs).build();
        ListenableFuture<QuoteReply> reply = retry.call(() -> pricing.quote(quote));
        reply.addListener(inFlight::release, MoreExecutors.directExecutor());
        ListenableFuture<Line> available = Futures.transform(reply,
                answer -> Line.newBuilder().setSku(sku).setAvailable(true)
                        .setPriceCents(answer.getPriceCents()).setQty(answer.getQty()).build(),
                MoreExecutors.directExecutor());
        return Futures.catching(available, Throwable.class, failure -> failed(sku, failure, served),
                MoreExecutors.directExecutor());
    }

    private Line failed(String sku, Throwable failure, Context served) {
        Status.Code code = Status.fromThrowable(failure).getCode();
        // A failure is never OK; should a broken future claim it, count it as UNKNOWN.
        Status.Code reason = code == Status.Code.OK ? Status.Code.UNKNOWN : code;
        if (served.isCancelled()) {
            // The caller's own cancellation (or deadline) ended the Quote: not a line Pricing failed.
            return Line.newBuilder().setSku(sku).setAvailable(false).setReason(reason.name()).build();
        }
        return unavailable(sku, reason);
    }

    private Line unavailable(String sku, Status.Code reason) {
        unavailableLines.get(reason).increment();
        return Line.newBuilder().setSku(sku).setAvailable(false).setReason(reason.name()).build();
    }
}
