package dev.grpcops.cli;

import dev.grpcops.budget.BudgetInterceptors;
import dev.grpcops.budget.BudgetRules;
import dev.grpcops.proto.chain.v1.CheckReply;
import dev.grpcops.proto.chain.v1.CheckRequest;
import dev.grpcops.proto.chain.v1.StatsReply;
import dev.grpcops.proto.chain.v1.StatsRequest;
import dev.grpcops.proto.chain.v1.StockGrpc;
import io.grpc.Grpc;
import io.grpc.Metadata;
import io.grpc.Server;
import io.grpc.ServerCall;
import io.grpc.ServerCallHandler;
import io.grpc.ServerInterceptor;
import io.grpc.ServerInterceptors;
import io.grpc.Status;
import io.grpc.netty.shaded.io.grpc.netty.NettyServerBuilder;
import io.grpc.stub.ServerCallStreamObserver;
import io.grpc.stub.StreamObserver;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.SocketAddress;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

/**
 * A tiny chain.v1.Stock on a Netty loopback port, counting what it receives: Check calls, their
 * headers and connections, and how many were in progress at once. Check
 * answers after delay_ms (without holding a thread); SKU "stall" is never answered; with
 * {@link #failEvery} = k every k-th Check fails UNAVAILABLE.
 */
final class TestStockServer implements AutoCloseable {

    static final Metadata.Key<String> CALLER = Metadata.Key.of("x-grpcops-caller", Metadata.ASCII_STRING_MARSHALLER);
    static final Metadata.Key<String> CRITICALITY =
            Metadata.Key.of("x-grpcops-criticality", Metadata.ASCII_STRING_MARSHALLER);

    /** The token that gets a caller the budget ledger back. */
    static final String LEDGER_TOKEN = "cli-test-ledger-token-0123456789";

    final AtomicLong calls = new AtomicLong();
    final ConcurrentLinkedQueue<String> callers = new ConcurrentLinkedQueue<>();
    final ConcurrentLinkedQueue<String> criticalities = new ConcurrentLinkedQueue<>();
    final Set<SocketAddress> peers = ConcurrentHashMap.newKeySet();
    final AtomicInteger inProgress = new AtomicInteger();
    final AtomicInteger maxInProgress = new AtomicInteger();
    volatile int failEvery;

    private final ScheduledExecutorService timer = Executors.newSingleThreadScheduledExecutor();
    private final Server server;

    TestStockServer() throws IOException {
        server = NettyServerBuilder.forAddress(new InetSocketAddress("127.0.0.1", 0))
                .addService(ServerInterceptors.intercept(
                        new Stock(),
                        new Recording(),
                        BudgetInterceptors.builder(BudgetRules.DEFAULTS)
                                .ledgerToken(LEDGER_TOKEN)
                                .build()
                                .server()))
                .build()
                .start();
    }

    String target() {
        return "127.0.0.1:" + server.getPort();
    }

    @Override
    public void close() throws InterruptedException {
        server.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
        timer.shutdownNow();
    }

    private final class Recording implements ServerInterceptor {
        @Override
        public <ReqT, RespT> ServerCall.Listener<ReqT> interceptCall(
                ServerCall<ReqT, RespT> call, Metadata headers, ServerCallHandler<ReqT, RespT> next) {
            if (call.getMethodDescriptor().equals(StockGrpc.getCheckMethod())) {
                String caller = headers.get(CALLER);
                callers.add(caller == null ? "" : caller);
                String criticality = headers.get(CRITICALITY);
                criticalities.add(criticality == null ? "" : criticality);
                peers.add(call.getAttributes().get(Grpc.TRANSPORT_ATTR_REMOTE_ADDR));
            }
            return next.startCall(call, headers);
        }
    }

    private final class Stock extends StockGrpc.StockImplBase {
        @Override
        public void check(CheckRequest request, StreamObserver<CheckReply> replies) {
            long n = calls.incrementAndGet();
            maxInProgress.accumulateAndGet(inProgress.incrementAndGet(), Math::max);
            ServerCallStreamObserver<CheckReply> observer = (ServerCallStreamObserver<CheckReply>) replies;
            observer.setOnCancelHandler(inProgress::decrementAndGet);
            if (request.getSku().equals("stall")) {
                return;
            }
            Runnable answer = () -> {
                if (observer.isCancelled()) {
                    return;
                }
                inProgress.decrementAndGet();
                if (failEvery > 0 && n % failEvery == 0) {
                    observer.onError(Status.UNAVAILABLE
                            .withDescription("every " + failEvery + "th call")
                            .asRuntimeException());
                } else {
                    observer.onNext(CheckReply.newBuilder()
                            .setSku(request.getSku())
                            .setQty(7)
                            .build());
                    observer.onCompleted();
                }
            };
            if (request.getDelayMs() > 0) {
                timer.schedule(answer, request.getDelayMs(), TimeUnit.MILLISECONDS);
            } else {
                answer.run();
            }
        }

        @Override
        public void stats(StatsRequest request, StreamObserver<StatsReply> replies) {
            replies.onNext(StatsReply.getDefaultInstance());
            replies.onCompleted();
        }
    }
}
