package dev.grpcops.edge;

import com.google.common.util.concurrent.FutureCallback;
import com.google.common.util.concurrent.Futures;
import com.google.common.util.concurrent.ListenableFuture;
import com.google.common.util.concurrent.MoreExecutors;
import dev.grpcops.chain.ChainInput;
import dev.grpcops.proto.chain.v1.CheckoutReply;
import dev.grpcops.proto.chain.v1.CheckoutRequest;
import dev.grpcops.proto.chain.v1.EdgeGrpc;
import dev.grpcops.proto.chain.v1.Line;
import dev.grpcops.proto.chain.v1.PricingGrpc;
import dev.grpcops.proto.chain.v1.QuoteReply;
import dev.grpcops.proto.chain.v1.QuoteRequest;
import dev.grpcops.retry.Retry;
import dev.grpcops.tracing.CallTags;
import io.grpc.Context;
import io.grpc.Status;
import io.grpc.stub.StreamObserver;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import java.util.EnumMap;
import java.util.HashMap;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.atomic.AtomicInteger;
import net.devh.boot.grpc.server.service.GrpcService;

/**
 * Checkout quotes every SKU at once, each Quote under the same budget (the library hands each
 * one remaining − reserve), hedges a Quote that has no answer after the learned delay (on another
 * Pricing replica), and retries a Quote that failed with UNAVAILABLE once if the budget allows. A
 * SKU that could not be quoted becomes an unavailable line; the Checkout still succeeds.
 */
@GrpcService
class EdgeService extends EdgeGrpc.EdgeImplBase {

    private final PricingGrpc.PricingFutureStub pricing;
    private final Retry retry;
    private final EdgeProperties properties;
    private final QuotesInFlight inFlight;
    /** One counter per status code, built up front: a failed line costs an increment, not a meter look-up. */
    private final Map<Status.Code, Counter> unavailableLines = new EnumMap<>(Status.Code.class);

    EdgeService(PricingGrpc.PricingFutureStub pricing, Retry retry, EdgeProperties properties, MeterRegistry registry) {
        this.pricing = pricing;
        this.retry = retry;
        this.properties = properties;
        this.inFlight = new QuotesInFlight(properties.maxQuotesInFlight(), registry);
        for (Status.Code code : Status.Code.values()) {
            if (code != Status.Code.OK) {
                unavailableLines.put(
                        code,
                        Counter.builder("edge.lines.unavailable")
                                .description(
                                        "Checkout lines answered as unavailable, by the status code that made them so")
                                .tag("reason", code.name())
                                .register(registry));
            }
        }
    }

    @Override
    public void checkout(CheckoutRequest request, StreamObserver<CheckoutReply> responses) {
        ChainInput.check(request, properties.maxSkus());
        Set<String> slow = request.getSlowSkusCount() == 0 ? Set.of() : Set.copyOf(request.getSlowSkusList());
        int slowDelayMs = (int) properties.slowDelay().toMillis();
        // A SKU asked for twice is quoted once; every requested line is answered, in request order.
        int[] answeredBy = new int[request.getSkusCount()];
        Map<String, Integer> firstAt = new HashMap<>();
        int quotes = 0;
        for (int i = 0; i < answeredBy.length; i++) {
            Integer first = firstAt.putIfAbsent(request.getSkus(i), i);
            answeredBy[i] = first == null ? i : first;
            quotes += first == null ? 1 : 0;
        }
        Checkout checkout = new Checkout(answeredBy, quotes, responses);
        for (int i = 0; i < answeredBy.length; i++) {
            if (answeredBy[i] == i) {
                String sku = request.getSkus(i);
                quote(checkout, i, sku, slow.contains(sku) ? slowDelayMs : request.getDelayMs());
            }
        }
    }

    /** One Quote, one callback: its line, available or not, goes to the Checkout it belongs to. */
    private void quote(Checkout checkout, int position, String sku, int delayMs) {
        if (!inFlight.tryAcquire()) {
            checkout.line(position, unavailable(sku, Status.Code.RESOURCE_EXHAUSTED));
            return;
        }
        QuoteRequest quote =
                QuoteRequest.newBuilder().setSku(sku).setDelayMs(delayMs).build();
        ListenableFuture<QuoteReply> quoted;
        try {
            quoted = retry.hedged(() -> pricing.quote(quote));
        } catch (RuntimeException e) {
            // Whatever goes wrong starting it, the permit comes back and the line is answered.
            inFlight.release();
            checkout.line(position, failed(sku, e, checkout.served));
            return;
        }
        Futures.addCallback(
                quoted,
                new FutureCallback<>() {
                    @Override
                    public void onSuccess(QuoteReply answer) {
                        inFlight.release();
                        checkout.line(
                                position,
                                Line.newBuilder()
                                        .setSku(sku)
                                        .setAvailable(true)
                                        .setPriceCents(answer.getPriceCents())
                                        .setQty(answer.getQty())
                                        .build());
                    }

                    @Override
                    public void onFailure(Throwable failure) {
                        inFlight.release();
                        checkout.line(position, failed(sku, failure, checkout.served));
                    }
                },
                MoreExecutors.directExecutor());
    }

    private Line failed(String sku, Throwable failure, Context served) {
        Status.Code code = Status.fromThrowable(failure).getCode();
        // A failure is never OK; should a broken future claim it, count it as UNKNOWN.
        Status.Code reason = code == Status.Code.OK ? Status.Code.UNKNOWN : code;
        if (served.isCancelled()) {
            // The caller's own cancellation (or deadline) ended the Quote: not a line Pricing failed.
            return Line.newBuilder()
                    .setSku(sku)
                    .setAvailable(false)
                    .setReason(reason.name())
                    .build();
        }
        return unavailable(sku, reason);
    }

    private Line unavailable(String sku, Status.Code reason) {
        unavailableLines.get(reason).increment();
        return Line.newBuilder()
                .setSku(sku)
                .setAvailable(false)
                .setReason(reason.name())
                .build();
    }

    /**
     * One Checkout being answered: its lines as the Quotes come in, answered in request order when
     * the last one has (a callback per Quote and a countdown, rather than a future per step).
     */
    private static final class Checkout {

        final Context served = Context.current();
        private final int[] answeredBy;
        private final Line[] lines;
        private final AtomicInteger missing;
        private final StreamObserver<CheckoutReply> responses;

        Checkout(int[] answeredBy, int quotes, StreamObserver<CheckoutReply> responses) {
            this.answeredBy = answeredBy;
            this.lines = new Line[answeredBy.length];
            this.missing = new AtomicInteger(quotes);
            this.responses = responses;
            if (quotes == 0) {
                answer();
            }
        }

        void line(int position, Line line) {
            lines[position] = line; // published to the thread that answers by the decrement below
            if (missing.decrementAndGet() == 0) {
                answer();
            }
        }

        private void answer() {
            if (served.isCancelled()) {
                return; // the caller has gone (cancelled, or its deadline passed): nobody to answer
            }
            CheckoutReply.Builder reply = CheckoutReply.newBuilder();
            Map<String, Integer> unavailable = null;
            for (int from : answeredBy) {
                Line line = lines[from];
                reply.addLines(line);
                if (!line.getAvailable()) {
                    unavailable = unavailable == null ? new java.util.TreeMap<>() : unavailable;
                    unavailable.merge(line.getReason(), 1, Integer::sum);
                }
            }
            if (unavailable != null) {
                String reasons = unavailable.toString();
                served.run(() -> CallTags.tag("grpcops.lines.unavailable", reasons));
            }
            responses.onNext(reply.build());
            responses.onCompleted();
        }
    }
}
