package dev.grpcops.spring.conformance;

import dev.grpcops.budget.Budget;
import dev.grpcops.proto.chain.v1.CheckReply;
import dev.grpcops.proto.chain.v1.CheckRequest;
import dev.grpcops.proto.chain.v1.PricingGrpc;
import dev.grpcops.proto.chain.v1.QuoteReply;
import dev.grpcops.proto.chain.v1.QuoteRequest;
import dev.grpcops.proto.chain.v1.StockGrpc;
import dev.grpcops.tracing.GrpcTracing;
import io.grpc.Channel;
import io.grpc.stub.StreamObserver;
import io.opentelemetry.api.trace.Span;
import io.opentelemetry.api.trace.SpanContext;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.Supplier;

/**
 * The services a starter's conformance application serves, each registered its integration's way:
 * a Stock that records the budget of every call it serves, and a Pricing that asks Stock through the
 * channel the integration makes for {@code "stock"}: one hop downstream. Neither blocks a thread.
 */
public final class ConformanceServices {

    private ConformanceServices() {}

    /** Answers at once, recording what is left of each served call's budget (-1: none). */
    public static final class RecordingStock extends StockGrpc.StockImplBase {

        private final List<Long> remainingMillis = new CopyOnWriteArrayList<>();
        private final Map<String, String> currentTraceIds = new ConcurrentHashMap<>();
        private final Map<String, String> correlatedTraceIds = new ConcurrentHashMap<>();

        @Override
        public void check(CheckRequest request, StreamObserver<CheckReply> replies) {
            remainingMillis.add(Budget.current()
                    .map(budget -> budget.remaining().toMillis())
                    .orElse(-1L));
            currentTraceIds.put(
                    request.getSku(), Span.current().getSpanContext().getTraceId());
            SpanContext correlated = GrpcTracing.currentSpanContext();
            if (correlated != null) {
                correlatedTraceIds.put(request.getSku(), correlated.getTraceId());
            }
            replies.onNext(
                    CheckReply.newBuilder().setSku(request.getSku()).setQty(1).build());
            replies.onCompleted();
        }

        /**
         * The trace id of the span current in OpenTelemetry's context while {@code sku}'s Check was
         * served (what other instrumentation in a handler joins); all zeros if none was.
         */
        public String currentTraceId(String sku) {
            return currentTraceIds.get(sku);
        }

        /** The trace id a log line written while serving {@code sku}'s Check carries, or null. */
        public String correlatedTraceId(String sku) {
            return correlatedTraceIds.get(sku);
        }

        /** What the last served call had left of its budget, in milliseconds. */
        public long lastRemainingMillis() {
            return remainingMillis.get(remainingMillis.size() - 1);
        }
    }

    /** Quotes by asking Stock through {@code stock}, the integration's channel named "stock". */
    public static final class ForwardingPricing extends PricingGrpc.PricingImplBase {

        private final Supplier<Channel> stock;
        private volatile StockGrpc.StockStub stub;

        public ForwardingPricing(Supplier<Channel> stock) {
            this.stock = stock;
        }

        @Override
        public void quote(QuoteRequest request, StreamObserver<QuoteReply> replies) {
            if (stub == null) {
                stub = StockGrpc.newStub(stock.get());
            }
            stub.check(CheckRequest.newBuilder().setSku(request.getSku()).build(), new StreamObserver<>() {
                @Override
                public void onNext(CheckReply reply) {
                    replies.onNext(QuoteReply.newBuilder()
                            .setSku(reply.getSku())
                            .setQty(reply.getQty())
                            .build());
                }

                @Override
                public void onError(Throwable failure) {
                    replies.onError(failure);
                }

                @Override
                public void onCompleted() {
                    replies.onCompleted();
                }
            });
        }
    }
}
