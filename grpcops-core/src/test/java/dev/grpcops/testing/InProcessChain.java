package dev.grpcops.testing;

import com.google.common.util.concurrent.FutureCallback;
import com.google.common.util.concurrent.Futures;
import com.google.common.util.concurrent.ListenableFuture;
import com.google.common.util.concurrent.MoreExecutors;
import dev.grpcops.ChannelStack;
import dev.grpcops.ServerStack;
import dev.grpcops.budget.BudgetInterceptors;
import dev.grpcops.budget.BudgetRules;
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
import dev.grpcops.retry.Retry;
import dev.grpcops.retry.RetryLimiter;
import dev.grpcops.retry.RetryListener;
import dev.grpcops.tracing.GrpcTracing;
import io.grpc.BindableService;
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
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.Executor;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import java.util.function.Supplier;

/**
 * The chain, Edge → Pricing → Stock, as three real gRPC hops in one JVM, each served and calling
 * through the library's stacks ({@link ServerStack}, {@link ChannelStack}) with the features a test
 * asks for: the budget at every hop always, the process's warm-up mark, retries, tracing, the
 * budget ledger. Edge quotes the first SKU of a Checkout; Pricing checks the SKU at Stock (once, or
 * {@link Builder#checksPerQuote} times at once); Stock's n-th call (from 1) answers what {@link
 * StockAnswer} says. Pricing and Stock record each call as their handler gets it; each hop's budget
 * layer, and the retries at Edge and Pricing, tell that hop's listener.
 */
public final class InProcessChain implements AutoCloseable {

    /**
     * A call as the hop's handler gets it, inside the hop's stack (the warm-up header, for one, is
     * gone by then: {@link #warmUp} says whether it was one).
     *
     * @param previousAttempts its {@code grpc-previous-rpc-attempts} header, or null
     * @param warmUp whether it was served as one of the process's warm-up calls
     * @param deadlineSeconds seconds left on the call's deadline when it arrived; -1 for none
     */
    public record Arrival(
            long nanos, String previousAttempts, boolean warmUp, double deadlineSeconds, Metadata headers) {}

    /** What Stock answers its {@code call}-th call (from 1): null for a reply of 7, else the failure. */
    @FunctionalInterface
    public interface StockAnswer {
        StatusRuntimeException answer(int call, CheckRequest request);
    }

    /** A {@link StockAnswer} that holds the call and never answers it. */
    public static final StatusRuntimeException NO_ANSWER =
            Status.UNKNOWN.withDescription("no answer").asRuntimeException();

    /** The headers of one of this process's warm-up calls. */
    public static Metadata warmUpHeaders() {
        Metadata headers = new Metadata();
        headers.put(WarmUpMark.HEADER, WarmUpMark.token());
        return headers;
    }

    /** Stock fails its first call with UNAVAILABLE and answers the rest. */
    public static StockAnswer firstCallFails() {
        return (call, request) -> call == 1 ? unavailable(null) : null;
    }

    /** UNAVAILABLE with {@code grpc-retry-pushback-ms: value} (null: none). */
    public static StatusRuntimeException unavailable(String pushback) {
        Metadata trailers = new Metadata();
        if (pushback != null) {
            trailers.put(Headers.RETRY_PUSHBACK, pushback);
        }
        return Status.UNAVAILABLE.withDescription("stock says no").asRuntimeException(trailers);
    }

    public final RecordingListener edgeListener = new RecordingListener();
    public final RecordingListener pricingListener = new RecordingListener();
    /** Stock's budget layer (it makes no downstream calls and does not retry). */
    public final RecordingListener stockListener = new RecordingListener();

    public final List<Arrival> pricingArrivals = new CopyOnWriteArrayList<>();
    public final List<Arrival> stockArrivals = new CopyOnWriteArrayList<>();
    /** Pricing's retries of its Stock calls; null without {@link Builder#retries}. */
    public final Retry pricingRetry;

    private final List<Server> servers = new ArrayList<>();
    private final List<ManagedChannel> channels = new ArrayList<>();
    private final ManagedChannel toEdge;
    private final ManagedChannel toPricingFromOutside;

    public static Builder builder(BudgetRules rules) {
        return new Builder(rules);
    }

    private InProcessChain(Builder builder) throws Exception {
        String name = InProcessServerBuilder.generateName();
        Retry edgeRetry = builder.retry(edgeListener);
        pricingRetry = builder.retry(pricingListener);
        try {
            servers.add(builder.server(name + "-stock", true)
                    .addService(builder.stack(stockListener)
                            .intercept(recorded(new Stock(builder.stockAnswer), stockArrivals)))
                    .build()
                    .start());
            ManagedChannel toStock =
                    channel(builder, name + "-stock", pricingListener, builder.pricingOnTransportThreads);
            servers.add(builder.server(name + "-pricing", builder.pricingOnTransportThreads)
                    .addService(builder.stack(pricingListener)
                            .intercept(recorded(
                                    new Pricing(StockGrpc.newFutureStub(toStock), pricingRetry, builder),
                                    pricingArrivals)))
                    .build()
                    .start());
            ManagedChannel toPricing = channel(builder, name + "-pricing", edgeListener, false);
            servers.add(builder.server(name + "-edge", false)
                    .addService(builder.stack(edgeListener)
                            .intercept(new Edge(PricingGrpc.newFutureStub(toPricing), edgeRetry)))
                    .build()
                    .start());
            toEdge = InProcessChannelBuilder.forName(name + "-edge").build();
            channels.add(toEdge);
            toPricingFromOutside =
                    InProcessChannelBuilder.forName(name + "-pricing").build();
            channels.add(toPricingFromOutside);
        } catch (Exception | Error e) {
            close();
            throw e;
        }
    }

    /** Calls Pricing directly (two hops), as a client that is not a budget hop. */
    public PricingGrpc.PricingBlockingStub pricing() {
        return PricingGrpc.newBlockingStub(toPricingFromOutside);
    }

    /** As {@link #pricing()}, without waiting for the answer. */
    public PricingGrpc.PricingFutureStub pricingFuture() {
        return PricingGrpc.newFutureStub(toPricingFromOutside);
    }

    public EdgeGrpc.EdgeBlockingStub edge() {
        return EdgeGrpc.newBlockingStub(toEdge);
    }

    public int stockCalls() {
        return stockArrivals.size();
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

    private ManagedChannel channel(Builder builder, String target, RecordingListener listener, boolean direct) {
        ChannelStack.Builder stack = ChannelStack.builder().budget(builder.budget(listener));
        if (builder.limiter != null) {
            stack.retryAttempts();
        }
        if (builder.tracing != null) {
            stack.tracing(builder.tracing);
        }
        InProcessChannelBuilder channel = InProcessChannelBuilder.forName(target);
        if (direct) {
            channel.directExecutor();
        }
        ManagedChannel built = stack.build().channel(channel);
        channels.add(built);
        return built;
    }

    /** {@code service}, recording each call as its handler gets it into {@code arrivals}. */
    private static io.grpc.ServerServiceDefinition recorded(BindableService service, List<Arrival> arrivals) {
        return ServerInterceptors.intercept(service, new ServerInterceptor() {
            @Override
            public <ReqT, RespT> ServerCall.Listener<ReqT> interceptCall(
                    ServerCall<ReqT, RespT> call, Metadata headers, ServerCallHandler<ReqT, RespT> next) {
                Deadline deadline = Context.current().getDeadline();
                arrivals.add(new Arrival(
                        System.nanoTime(),
                        headers.get(Headers.PREVIOUS_ATTEMPTS),
                        WarmUpMark.active(),
                        deadline == null ? -1 : deadline.timeRemaining(TimeUnit.NANOSECONDS) / 1e9,
                        headers));
                return next.startCall(call, headers);
            }
        });
    }

    /** Every feature is left out unless given, but the budget. */
    public static final class Builder {

        private final BudgetRules rules;
        private StockAnswer stockAnswer = (call, request) -> null;
        private Supplier<RetryLimiter> limiter;
        private GrpcTracing tracing;
        private Consumer<QuoteRequest> onQuote = request -> {};
        private Executor stockCallsFrom;
        private boolean pricingOnTransportThreads;
        private int checksPerQuote = 1;
        private String ledgerToken;

        private Builder(BudgetRules rules) {
            this.rules = Objects.requireNonNull(rules, "rules");
        }

        /** What Stock answers; a reply to every call by default. */
        public Builder stock(StockAnswer answer) {
            this.stockAnswer = Objects.requireNonNull(answer, "answer");
            return this;
        }

        /** Edge and Pricing retry through {@link Retry}, each hop with its own limiter from {@code limiter}. */
        public Builder retries(Supplier<RetryLimiter> limiter) {
            this.limiter = Objects.requireNonNull(limiter, "limiter");
            return this;
        }

        /** With each hop's default retry limiter. */
        public Builder retries() {
            return retries(() -> RetryLimiter.defaults(RetryListener.NONE));
        }

        /** Every hop serves and calls through {@code tracing}. */
        public Builder tracing(GrpcTracing tracing) {
            this.tracing = Objects.requireNonNull(tracing, "tracing");
            return this;
        }

        /** Told of each Quote in Pricing's handler, in the served call's context, before it calls Stock. */
        public Builder onQuote(Consumer<QuoteRequest> onQuote) {
            this.onQuote = Objects.requireNonNull(onQuote, "onQuote");
            return this;
        }

        /** Pricing's Stock calls start on {@code executor}, in the served call's context (as a hedge does). */
        public Builder stockCallsFrom(Executor executor) {
            this.stockCallsFrom = Objects.requireNonNull(executor, "executor");
            return this;
        }

        /** Pricing serves, and calls Stock, on the transport's threads (Stock always does). */
        public Builder pricingOnTransportThreads() {
            this.pricingOnTransportThreads = true;
            return this;
        }

        /** Pricing makes {@code checks} Stock calls at once per Quote, and answers once all have; 1 by default. */
        public Builder checksPerQuote(int checks) {
            if (checks < 1) {
                throw new IllegalArgumentException("checks must be at least 1, was " + checks);
            }
            this.checksPerQuote = checks;
            return this;
        }

        /** Every hop's budget layer passes its ledger line back to a caller that sends {@code token}. */
        public Builder ledgerToken(String token) {
            this.ledgerToken = Objects.requireNonNull(token, "token");
            return this;
        }

        public InProcessChain build() throws Exception {
            return new InProcessChain(this);
        }

        private Retry retry(RecordingListener listener) {
            return limiter == null
                    ? null
                    : Retry.builder(rules)
                            .limiter(limiter.get())
                            .listener(listener)
                            .build();
        }

        private BudgetInterceptors budget(RecordingListener listener) {
            BudgetInterceptors.Builder budget =
                    BudgetInterceptors.builder(rules).listener(listener).excludedServices(Set.of());
            if (ledgerToken != null) {
                budget.ledgerToken(ledgerToken);
            }
            return budget.build();
        }

        private ServerStack stack(RecordingListener listener) {
            ServerStack.Builder stack = ServerStack.builder().warmUp().budget(budget(listener));
            if (tracing != null) {
                stack.tracing(tracing);
            }
            return stack.build();
        }

        private InProcessServerBuilder server(String name, boolean direct) {
            InProcessServerBuilder server = InProcessServerBuilder.forName(name);
            if (direct) {
                server.directExecutor();
            }
            return server;
        }
    }

    private static final class Stock extends StockGrpc.StockImplBase {

        private final StockAnswer answer;
        private int calls;

        Stock(StockAnswer answer) {
            this.answer = answer;
        }

        @Override
        public void check(CheckRequest request, StreamObserver<CheckReply> responses) {
            StatusRuntimeException failure;
            synchronized (this) {
                failure = answer.answer(++calls, request);
            }
            if (failure == NO_ANSWER) {
                return;
            }
            if (failure != null) {
                responses.onError(failure);
                return;
            }
            responses.onNext(
                    CheckReply.newBuilder().setSku(request.getSku()).setQty(7).build());
            responses.onCompleted();
        }
    }

    private static final class Pricing extends PricingGrpc.PricingImplBase {

        private final StockGrpc.StockFutureStub stock;
        private final Retry retry;
        private final Consumer<QuoteRequest> onQuote;
        private final Executor stockCallsFrom;
        private final int checks;

        Pricing(StockGrpc.StockFutureStub stock, Retry retry, Builder builder) {
            this.stock = stock;
            this.retry = retry;
            this.onQuote = builder.onQuote;
            this.stockCallsFrom = builder.stockCallsFrom;
            this.checks = builder.checksPerQuote;
        }

        @Override
        public void quote(QuoteRequest request, StreamObserver<QuoteReply> responses) {
            onQuote.accept(request);
            CheckRequest check =
                    CheckRequest.newBuilder().setSku(request.getSku()).build();
            Runnable call = () -> {
                List<ListenableFuture<CheckReply>> all = new ArrayList<>(checks);
                for (int i = 0; i < checks; i++) {
                    all.add(retry == null ? stock.check(check) : retry.call(() -> stock.check(check)));
                }
                answer(Futures.allAsList(all), responses);
            };
            if (stockCallsFrom == null) {
                call.run();
            } else {
                stockCallsFrom.execute(Context.current().wrap(call));
            }
        }

        /** The first check's reply once every check has answered; the first failure if one fails. */
        private static void answer(ListenableFuture<List<CheckReply>> checked, StreamObserver<QuoteReply> responses) {
            Futures.addCallback(
                    checked,
                    new FutureCallback<List<CheckReply>>() {
                        @Override
                        public void onSuccess(List<CheckReply> replies) {
                            CheckReply reply = replies.get(0);
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
            ListenableFuture<QuoteReply> quoted =
                    retry == null ? pricing.quote(quote) : retry.call(() -> pricing.quote(quote));
            Futures.addCallback(
                    quoted,
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
