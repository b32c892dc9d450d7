package dev.grpcops.tracing;

import com.google.common.util.concurrent.FutureCallback;
import com.google.common.util.concurrent.Futures;
import com.google.common.util.concurrent.MoreExecutors;
import dev.grpcops.deadline.BudgetInterceptors;
import dev.grpcops.deadline.BudgetRules;
import dev.grpcops.internal.WarmUpMark;
import dev.grpcops.proto.chain.v1.CheckReply;
import dev.grpcops.proto.chain.v1.CheckRequest;
import dev.grpcops.proto.chain.v1.PricingGrpc;
import dev.grpcops.proto.chain.v1.QuoteReply;
import dev.grpcops.proto.chain.v1.QuoteRequest;
import dev.grpcops.proto.chain.v1.StockGrpc;
import dev.grpcops.warmup.WarmUp;
import io.grpc.Context;
import io.grpc.ManagedChannel;
import io.grpc.Metadata;
import io.grpc.Server;
import io.grpc.ServerCall;
import io.grpc.ServerCallHandler;
import io.grpc.ServerInterceptor;
import io.grpc.ServerInterceptors;
import io.grpc.Status;
import io.grpc.inprocess.InProcessChannelBuilder;
import io.grpc.inprocess.InProcessServerBuilder;
import io.grpc.stub.StreamObserver;
import io.opentelemetry.api.trace.SpanContext;
import io.opentelemetry.api.trace.propagation.W3CTraceContextPropagator;
import io.opentelemetry.context.propagation.ContextPropagators;
import io.opentelemetry.sdk.OpenTelemetrySdk;
import io.opentelemetry.sdk.common.CompletableResultCode;
import io.opentelemetry.sdk.trace.SdkTracerProvider;
import io.opentelemetry.sdk.trace.data.SpanData;
import io.opentelemetry.sdk.trace.export.SimpleSpanProcessor;
import io.opentelemetry.sdk.trace.export.SpanExporter;
import io.opentelemetry.sdk.trace.samplers.Sampler;
import java.util.Collection;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;

/**
 * Pricing → Stock in one JVM, traced by {@link GrpcTracing} on an OpenTelemetry SDK whose spans end
 * up in {@link #spans}: Pricing serves through the budget and the tracing interceptors and calls
 * Stock (from another thread when {@code fromTimer}, as a hedge starts); Stock records the headers
 * and the served span context of every call. A Stock SKU named {@code fail} fails with
 * {@code UNAVAILABLE}; {@code hang} never answers.
 */
final class TracedChain implements AutoCloseable {

    final List<SpanData> spans = new CopyOnWriteArrayList<>();
    final List<Metadata> stockHeaders = new CopyOnWriteArrayList<>();
    final List<SpanContext> pricingServed = new CopyOnWriteArrayList<>();
    final List<String> stockTraced = new CopyOnWriteArrayList<>();

    static final Metadata.Key<String> TRACEPARENT = Metadata.Key.of("traceparent", Metadata.ASCII_STRING_MARSHALLER);

    private final SdkTracerProvider provider;
    private final ScheduledExecutorService timer = Executors.newSingleThreadScheduledExecutor();
    private final Server stock;
    private final Server pricing;
    private final ManagedChannel toStock;
    private final ManagedChannel toPricing;

    TracedChain(Sampler sampler, boolean fromTimer) throws Exception {
        provider = SdkTracerProvider.builder()
                .setSampler(sampler)
                .addSpanProcessor(SimpleSpanProcessor.create(new SpanExporter() {
                    @Override
                    public CompletableResultCode export(Collection<SpanData> batch) {
                        spans.addAll(batch);
                        return CompletableResultCode.ofSuccess();
                    }

                    @Override
                    public CompletableResultCode flush() {
                        return CompletableResultCode.ofSuccess();
                    }

                    @Override
                    public CompletableResultCode shutdown() {
                        return CompletableResultCode.ofSuccess();
                    }
                }))
                .build();
        OpenTelemetrySdk sdk = OpenTelemetrySdk.builder()
                .setTracerProvider(provider)
                .setPropagators(ContextPropagators.create(W3CTraceContextPropagator.getInstance()))
                .build();
        GrpcTracing tracing =
                GrpcTracing.builder(sdk).budgetRules(BudgetRules.DEFAULTS).build();
        BudgetInterceptors budget =
                BudgetInterceptors.builder(BudgetRules.DEFAULTS).build();
        String name = InProcessServerBuilder.generateName();
        stock = InProcessServerBuilder.forName(name + "-stock")
                .directExecutor()
                .addService(ServerInterceptors.intercept(
                        new Stock(), tracing.servedCallTags(), budget.server(), tracing.servedCalls(), recordHeaders()))
                .build()
                .start();
        toStock = InProcessChannelBuilder.forName(name + "-stock")
                .directExecutor()
                .intercept(tracing.attempts(), budget.client())
                .build();
        pricing = InProcessServerBuilder.forName(name + "-pricing")
                .directExecutor()
                .addService(ServerInterceptors.intercept(
                        new Pricing(StockGrpc.newFutureStub(toStock), fromTimer),
                        tracing.servedCallTags(),
                        budget.server(),
                        tracing.servedCalls(),
                        WarmUp.serverInterceptor()))
                .build()
                .start();
        toPricing = InProcessChannelBuilder.forName(name + "-pricing").build();
    }

    PricingGrpc.PricingBlockingStub pricing() {
        return PricingGrpc.newBlockingStub(toPricing);
    }

    PricingGrpc.PricingFutureStub pricingFuture() {
        return PricingGrpc.newFutureStub(toPricing);
    }

    /** The ended spans named {@code name}. */
    List<SpanData> named(String name) {
        return spans.stream().filter(span -> span.getName().equals(name)).toList();
    }

    private ServerInterceptor recordHeaders() {
        return new ServerInterceptor() {
            @Override
            public <ReqT, RespT> ServerCall.Listener<ReqT> interceptCall(
                    ServerCall<ReqT, RespT> call, Metadata headers, ServerCallHandler<ReqT, RespT> next) {
                stockHeaders.add(headers);
                return next.startCall(call, headers);
            }
        };
    }

    @Override
    public void close() throws InterruptedException {
        timer.shutdownNow();
        for (ManagedChannel channel : List.of(toPricing, toStock)) {
            channel.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
        }
        for (Server server : List.of(pricing, stock)) {
            server.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
        }
        provider.close();
    }

    private final class Pricing extends PricingGrpc.PricingImplBase {

        private final StockGrpc.StockFutureStub stock;
        private final boolean fromTimer;

        Pricing(StockGrpc.StockFutureStub stock, boolean fromTimer) {
            this.stock = stock;
            this.fromTimer = fromTimer;
        }

        @Override
        public void quote(QuoteRequest request, StreamObserver<QuoteReply> responses) {
            SpanContext served = GrpcTracing.currentSpanContext();
            if (served != null) {
                pricingServed.add(served);
            }
            CallTags.tag("test.sku", request.getSku());
            Runnable call = () -> Futures.addCallback(
                    stock.check(
                            CheckRequest.newBuilder().setSku(request.getSku()).build()),
                    new FutureCallback<CheckReply>() {
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
                            responses.onError(Status.fromThrowable(failure).asRuntimeException());
                        }
                    },
                    MoreExecutors.directExecutor());
            if (fromTimer) {
                // Another thread, in the served call's context: how a hedge or a pushed-back retry starts.
                timer.schedule(Context.current().wrap(call), 1, TimeUnit.MILLISECONDS);
            } else {
                call.run();
            }
        }
    }

    private final class Stock extends StockGrpc.StockImplBase {

        @Override
        public void check(CheckRequest request, StreamObserver<CheckReply> responses) {
            stockTraced.add(Boolean.toString(CallTags.traced()));
            if (request.getSku().equals("fail")) {
                responses.onError(
                        Status.UNAVAILABLE.withDescription("stock is down").asRuntimeException());
                return;
            }
            if (request.getSku().equals("hang")) {
                return;
            }
            responses.onNext(
                    CheckReply.newBuilder().setSku(request.getSku()).setQty(3).build());
            responses.onCompleted();
        }
    }

    /** Headers saying "this is one of the process's warm-up calls". */
    static Metadata warmUp() {
        Metadata headers = new Metadata();
        headers.put(WarmUpMark.HEADER, WarmUpMark.token());
        return headers;
    }
}
