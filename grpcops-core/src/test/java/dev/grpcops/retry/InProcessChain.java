package dev.grpcops.retry;

import dev.grpcops.deadline.BudgetInterceptors;
import dev.grpcops.deadline.BudgetRules;
import dev.grpcops.proto.chain.v1.CheckReply;
import dev.grpcops.proto.chain.v1.CheckRequest;
import dev.grpcops.proto.chain.v1.PricingGrpc;
import dev.grpcops.proto.chain.v1.StockGrpc;
import io.grpc.Context;
import io.grpc.Deadline;
import io.grpc.ManagedChannel;
import io.grpc.Server;
import io.grpc.ServerInterceptors;
import io.grpc.Status;
import io.grpc.inprocess.InProcessChannelBuilder;
import io.grpc.inprocess.InProcessServerBuilder;
import io.grpc.stub.StreamObserver;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Two real gRPC hops in one JVM: a "pricing" server with the budget interceptors that calls a
 * "stock" server, which records the deadline each call arrived with. Stock fails its first call
 * with UNAVAILABLE when {@code flaky}; pricing retries through {@link Retry}.
 */
final class InProcessChain implements AutoCloseable {

    final RecordingListener listener = new RecordingListener();
    /** Seconds left on the caller's deadline when each stock call arrived; -1 for none. */
    final List<Double> stockReceived = new CopyOnWriteArrayList<>();

    private final AtomicInteger stockCalls = new AtomicInteger();
    private final Server stock;
    private final Server pricing;
    private final ManagedChannel toStock;
    private final ManagedChannel toPricing;

    InProcessChain(BudgetRules rules, boolean flaky) throws Exception {
        String name = InProcessServerBuilder.generateName();
        stock = InProcessServerBuilder.forName(name + "-stock")
                .directExecutor()
                .addService(new RecordingStock(flaky))
                .build()
                .start();
        toStock = InProcessChannelBuilder.forName(name + "-stock")
                .intercept(
                        BudgetInterceptors.builder(rules)
                                .listener(listener)
                                .build()
                                .client(),
                        Retry.clientInterceptor())
                .build();
        Retry retry = Retry.builder(rules).listener(listener).build();
        pricing = InProcessServerBuilder.forName(name + "-pricing")
                .addService(ServerInterceptors.intercept(
                        new RetryingPricing(StockGrpc.newFutureStub(toStock), retry),
                        BudgetInterceptors.builder(rules)
                                .listener(listener)
                                .excludedServices(Set.of())
                                .build()
                                .server()))
                .build()
                .start();
        toPricing = InProcessChannelBuilder.forName(name + "-pricing").build();
    }

    PricingGrpc.PricingBlockingStub pricing() {
        return PricingGrpc.newBlockingStub(toPricing);
    }

    int stockCalls() {
        return stockCalls.get();
    }

    @Override
    public void close() throws InterruptedException {
        for (ManagedChannel channel : List.of(toPricing, toStock)) {
            channel.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
        }
        for (Server server : List.of(pricing, stock)) {
            server.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
        }
    }

    private final class RecordingStock extends StockGrpc.StockImplBase {

        private final boolean flaky;

        RecordingStock(boolean flaky) {
            this.flaky = flaky;
        }

        @Override
        public void check(CheckRequest request, StreamObserver<CheckReply> responses) {
            Deadline deadline = Context.current().getDeadline();
            stockReceived.add(deadline == null ? -1 : deadline.timeRemaining(TimeUnit.NANOSECONDS) / 1e9);
            if (stockCalls.incrementAndGet() == 1 && flaky) {
                responses.onError(
                        Status.UNAVAILABLE.withDescription("first call fails").asRuntimeException());
                return;
            }
            responses.onNext(
                    CheckReply.newBuilder().setSku(request.getSku()).setQty(7).build());
            responses.onCompleted();
        }
    }
}
