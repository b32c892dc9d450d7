package dev.grpcops.retry;

import com.google.common.util.concurrent.FutureCallback;
import com.google.common.util.concurrent.Futures;
import com.google.common.util.concurrent.MoreExecutors;
import dev.grpcops.deadline.BudgetInterceptors;
import dev.grpcops.deadline.BudgetListener;
import dev.grpcops.deadline.BudgetRules;
import dev.grpcops.internal.Headers;
import dev.grpcops.internal.WarmUpMark;
import dev.grpcops.proto.chain.v1.CheckReply;
import dev.grpcops.proto.chain.v1.CheckRequest;
import dev.grpcops.proto.chain.v1.CheckoutReply;
import dev.grpcops.proto.chain.v1.CheckoutRequest;
import dev.grpcops.proto.chain.v1.EdgeGrpc;
import dev.grpcops.proto.chain.v1.Line;
import dev.grpcops.proto.chain.v1.PricingGrpc;
import dev.grpcops.proto.chain.v1.QuoteReply;
import dev.grpcops.proto.chain.v1.QuoteRequest;
import dev.grpcops.proto.chain.v1.StockGrpc;
import dev.grpcops.warmup.WarmUp;
import io.grpc.Context;
import io.grpc.Deadline;
import io.grpc.ManagedChannel;
import io.grpc.Metadata;
import io.grpc.Server;
import io.grpc.ServerCall;
import io.grpc.ServerCallHandler;
import io.grpc.ServerInterceptor;
import io.grpc.ServerInterceptors;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.inprocess.InProcessChannelBuilder;
import io.grpc.inprocess.InProcessServerBuilder;
import io.grpc.stub.StreamObserver;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.function.IntFunction;
import java.util.function.Supplier;

/**
 * Three real gRPC hops in one JVM for the retries (design §11): "edge" (Checkout, one Quote per SKU
 * through {@link Retry}) → "pricing" (Quote, one Check through its own {@link Retry}) → "stock",
 * whose n-th call (from 1) answers what {@code stockAnswer} says: null for a reply, else the
 * exception to fail with (trailers included). Every hop has the budget interceptors; pricing and
 * stock record the arrival of each call: when, its {@code grpc-previous-rpc-attempts} header, the
 * budget it arrived with.
 */
final class RetryChain implements AutoCloseable {

    /**
     * @param deadlineSeconds seconds left on the call's deadline when it arrived; -1 for none
     */
    record Arrival(long nanos, String previousAttempts, boolean warmUp, double deadlineSeconds) {}

    final RecordingListener edgeListener = new RecordingListener();
    final RecordingListener pricingListener = new RecordingListener();
    final List<Arrival> stockArrivals = new CopyOnWriteArrayList<>();
    final List<Arrival> pricingArrivals = new CopyOnWriteArrayList<>();
    final Retry pricingRetry;

    private final List<Server> servers = new ArrayList<>();
    private final List<ManagedChannel> channels = new ArrayList<>();
    private final ManagedChannel toPricing;
    private final ManagedChannel toEdge;
    private final ManagedChannel toPricingDirect;

    /** With the default retry limiter at each hop. */
    RetryChain(BudgetRules rules, IntFunction<StatusRuntimeException> stockAnswer) throws Exception {
        this(rules, () -> RetryLimiter.defaults(RetryListener.NONE), stockAnswer);
    }

    RetryChain(BudgetRules rules, Supplier<RetryLimiter> limiter, IntFunction<StatusRuntimeException> stockAnswer)
            throws Exception {
        String name = InProcessServerBuilder.generateName();
        servers.add(InProcessServerBuilder.forName(name + "-stock")
                .directExecutor()
                .addService(ServerInterceptors.intercept(
                        new Stock(stockAnswer), recording(stockArrivals), WarmUp.serverInterceptor()))
                .build()
                .start());
        ManagedChannel toStock = channel(name + "-stock", rules, pricingListener);
        pricingRetry = Retry.builder(rules)
                .limiter(limiter.get())
                .listener(pricingListener)
                .build();
        servers.add(InProcessServerBuilder.forName(name + "-pricing")
                .addService(ServerInterceptors.intercept(
                        new RetryingPricing(StockGrpc.newFutureStub(toStock), pricingRetry),
                        BudgetInterceptors.builder(rules)
                                .listener(pricingListener)
                                .excludedServices(java.util.Set.of())
                                .build()
                                .server(),
                        recording(pricingArrivals),
                        WarmUp.serverInterceptor()))
                .build()
                .start());
        toPricing = channel(name + "-pricing", rules, edgeListener);
        Retry edgeRetry = Retry.builder(rules)
                .limiter(limiter.get())
                .listener(edgeListener)
                .build();
        servers.add(InProcessServerBuilder.forName(name + "-edge")
                .addService(ServerInterceptors.intercept(
                        new Edge(PricingGrpc.newFutureStub(toPricing), edgeRetry),
                        BudgetInterceptors.builder(rules)
                                .listener(edgeListener)
                                .excludedServices(java.util.Set.of())
                                .build()
                                .server(),
                        WarmUp.serverInterceptor()))
                .build()
                .start());
        toEdge = InProcessChannelBuilder.forName(name + "-edge").build();
        channels.add(toEdge);
        toPricingDirect = InProcessChannelBuilder.forName(name + "-pricing").build();
        channels.add(toPricingDirect);
    }

    /** Calls pricing directly (two hops), as a client that is not a budget hop. */
    PricingGrpc.PricingBlockingStub pricing() {
        return PricingGrpc.newBlockingStub(toPricingDirect);
    }

    EdgeGrpc.EdgeBlockingStub edge() {
        return EdgeGrpc.newBlockingStub(toEdge);
    }

    /** Stock fails its first call with UNAVAILABLE and answers the rest. */
    static IntFunction<StatusRuntimeException> firstCallFails() {
        return call -> call == 1 ? unavailable(null) : null;
    }

    int stockCalls() {
        return stockArrivals.size();
    }

    /** UNAVAILABLE with {@code grpc-retry-pushback-ms: value} (null: none). */
    static StatusRuntimeException unavailable(String pushback) {
        Metadata trailers = new Metadata();
        if (pushback != null) {
            trailers.put(Headers.RETRY_PUSHBACK, pushback);
        }
        return Status.UNAVAILABLE.withDescription("stock says no").asRuntimeException(trailers);
    }

    private ManagedChannel channel(String target, BudgetRules rules, BudgetListener listener) {
        ManagedChannel channel = InProcessChannelBuilder.forName(target)
                .intercept(
                        BudgetInterceptors.builder(rules)
                                .listener(listener)
                                .build()
                                .client(),
                        Retry.clientInterceptor())
                .build();
        channels.add(channel);
        return channel;
    }

    @Override
    public void close() throws InterruptedException {
        for (ManagedChannel channel : channels) {
            channel.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
        }
        for (Server server : servers) {
            server.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
        }
    }

    private static ServerInterceptor recording(List<Arrival> arrivals) {
        return new ServerInterceptor() {
            @Override
            public <ReqT, RespT> ServerCall.Listener<ReqT> interceptCall(
                    ServerCall<ReqT, RespT> call, Metadata headers, ServerCallHandler<ReqT, RespT> next) {
                Deadline deadline = Context.current().getDeadline();
                arrivals.add(new Arrival(
                        System.nanoTime(),
                        headers.get(Headers.PREVIOUS_ATTEMPTS),
                        WarmUpMark.active(),
                        deadline == null ? -1 : deadline.timeRemaining(TimeUnit.NANOSECONDS) / 1e9));
                return next.startCall(call, headers);
            }
        };
    }

    private final class Stock extends StockGrpc.StockImplBase {

        private final IntFunction<StatusRuntimeException> answer;
        private int calls;

        Stock(IntFunction<StatusRuntimeException> answer) {
            this.answer = answer;
        }

        @Override
        public synchronized void check(CheckRequest request, StreamObserver<CheckReply> responses) {
            StatusRuntimeException failure = answer.apply(++calls);
            if (failure != null) {
                responses.onError(failure);
                return;
            }
            responses.onNext(
                    CheckReply.newBuilder().setSku(request.getSku()).setQty(7).build());
            responses.onCompleted();
        }
    }

    private static final class Edge extends EdgeGrpc.EdgeImplBase {

        private final PricingGrpc.PricingFutureStub pricing;
        private final Retry retry;

        Edge(PricingGrpc.PricingFutureStub pricing, Retry retry) {
            this.pricing = pricing;
            this.retry = retry;
        }

        @Override
        public void checkout(CheckoutRequest request, StreamObserver<CheckoutReply> responses) {
            QuoteRequest quote =
                    QuoteRequest.newBuilder().setSku(request.getSkus(0)).build();
            Futures.addCallback(
                    retry.call(() -> pricing.quote(quote)),
                    new FutureCallback<>() {
                        @Override
                        public void onSuccess(QuoteReply reply) {
                            responses.onNext(CheckoutReply.newBuilder()
                                    .addLines(Line.newBuilder()
                                            .setSku(reply.getSku())
                                            .setAvailable(true))
                                    .build());
                            responses.onCompleted();
                        }

                        @Override
                        public void onFailure(Throwable failure) {
                            responses.onNext(CheckoutReply.newBuilder()
                                    .addLines(Line.newBuilder()
                                            .setSku(quote.getSku())
                                            .setAvailable(false)
                                            .setReason(Status.fromThrowable(failure)
                                                    .getCode()
                                                    .name()))
                                    .build());
                            responses.onCompleted();
                        }
                    },
                    MoreExecutors.directExecutor());
        }
    }
}
