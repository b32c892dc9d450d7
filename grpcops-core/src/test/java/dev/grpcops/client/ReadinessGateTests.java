package dev.grpcops.client;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

import dev.grpcops.proto.chain.v1.CheckReply;
import dev.grpcops.proto.chain.v1.CheckRequest;
import dev.grpcops.proto.chain.v1.StockGrpc;
import dev.grpcops.testing.FakeClock;
import io.grpc.ManagedChannel;
import io.grpc.ManagedChannelBuilder;
import io.grpc.Server;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.netty.shaded.io.grpc.netty.NettyServerBuilder;
import io.grpc.stub.StreamObserver;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** A channel that has no replica yet: its calls wait within their deadline, for a while. */
@Timeout(60)
class ReadinessGateTests {

    private static final CheckRequest CHECK =
            CheckRequest.newBuilder().setSku("a").build();

    private static int freePort() throws Exception {
        try (ServerSocket socket = new ServerSocket(0, 1, java.net.InetAddress.getByName("127.0.0.1"))) {
            return socket.getLocalPort();
        }
    }

    private static Server stock(int port) throws Exception {
        return stock(port, new java.util.concurrent.atomic.AtomicInteger());
    }

    /** A Stock on {@code port} that counts the calls it receives in {@code received}. */
    private static Server stock(int port, java.util.concurrent.atomic.AtomicInteger received) throws Exception {
        return NettyServerBuilder.forAddress(new InetSocketAddress("127.0.0.1", port))
                .addService(new StockGrpc.StockImplBase() {
                    @Override
                    public void check(CheckRequest request, StreamObserver<CheckReply> responses) {
                        received.incrementAndGet();
                        responses.onNext(CheckReply.newBuilder().setQty(1).build());
                        responses.onCompleted();
                    }
                })
                .build()
                .start();
    }

    /** A channel to {@code port} whose calls {@code gate} lets wait, the gate following it. */
    private static ManagedChannel gated(int port, ReadinessGate gate) {
        ManagedChannel channel = ManagedChannelBuilder.forTarget("list:///127.0.0.1:" + port)
                .usePlaintext()
                .intercept(gate)
                .build();
        gate.follow(channel);
        return channel;
    }

    @Test
    void aCallMadeBeforeTheReplicaListensWaitsForItInsteadOfFailing() throws Exception {
        int port = freePort();
        ReadinessGate gate = new ReadinessGate(Duration.ofSeconds(30));
        ManagedChannel channel = gated(port, gate);
        Server server = null;
        try {
            var call = StockGrpc.newFutureStub(channel)
                    .withDeadlineAfter(20, TimeUnit.SECONDS)
                    .check(CHECK);
            org.awaitility.Awaitility.await()
                    .atMost(Duration.ofSeconds(10))
                    .until(() -> channel.getState(false) == io.grpc.ConnectivityState.TRANSIENT_FAILURE);
            assertThat(call.isDone()).as("waiting, not failed").isFalse();
            server = stock(port);
            channel.resetConnectBackoff();
            assertThat(call.get(20, TimeUnit.SECONDS).getQty()).isEqualTo(1);
            assertThat(gate.waiting()).as("ready now: calls no longer wait").isFalse();
        } finally {
            channel.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
            if (server != null) {
                server.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
            }
        }
    }

    @Test
    void pastTheWindowCallsFailFastAgain() throws Exception {
        FakeClock clock = new FakeClock();
        ReadinessGate gate = new ReadinessGate(Duration.ofSeconds(5), clock.nanoClock());
        ManagedChannel channel = ManagedChannelBuilder.forTarget("list:///127.0.0.1:" + freePort())
                .usePlaintext()
                .intercept(gate)
                .build();
        gate.follow(channel);
        try {
            assertThat(gate.waiting()).isTrue();
            clock.forward(Duration.ofSeconds(6));
            assertThat(gate.waiting()).isFalse();
            StatusRuntimeException failed = catchThrowableOfType(
                    StatusRuntimeException.class,
                    () -> StockGrpc.newBlockingStub(channel)
                            .withDeadlineAfter(20, TimeUnit.SECONDS)
                            .check(CHECK));
            assertThat(failed.getStatus().getCode()).isEqualTo(Status.Code.UNAVAILABLE);
        } finally {
            channel.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
        }
    }

    /**
     * design §16 (interaction matrix: flapping or restarting × readiness gate): once the channel has
     * been READY, a replica that goes away fails the next call at once with UNAVAILABLE, for the
     * caller to retry elsewhere, instead of holding it until its deadline.
     */
    @Test
    void aReplicaGoneAfterTheChannelWasReadyFailsCallsAtOnce() throws Exception {
        int port = freePort();
        ReadinessGate gate = new ReadinessGate(Duration.ofSeconds(30));
        ManagedChannel channel = gated(port, gate);
        Server server = stock(port);
        try {
            assertThat(StockGrpc.newBlockingStub(channel)
                            .withDeadlineAfter(20, TimeUnit.SECONDS)
                            .check(CHECK)
                            .getQty())
                    .isEqualTo(1);
            org.awaitility.Awaitility.await().atMost(Duration.ofSeconds(10)).until(() -> !gate.waiting());
            server.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);

            StatusRuntimeException failed = catchThrowableOfType(
                    StatusRuntimeException.class,
                    () -> StockGrpc.newBlockingStub(channel)
                            .withDeadlineAfter(20, TimeUnit.SECONDS)
                            .check(CHECK));
            assertThat(failed.getStatus().getCode())
                    .as("failed fast, not held until its deadline")
                    .isEqualTo(Status.Code.UNAVAILABLE);
        } finally {
            channel.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
            server.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
        }
    }

    /**
     * design §16 (a caller cancelling fan-outs × readiness gate): calls waiting for a replica that is
     * not up yet end CANCELLED as soon as their caller cancels, and none of them reaches the replica
     * once it is up.
     */
    @Test
    void waitingCallsCancelledByTheirCallerEndAtOnceAndNeverReachTheReplica() throws Exception {
        int port = freePort();
        ReadinessGate gate = new ReadinessGate(Duration.ofSeconds(30));
        ManagedChannel channel = gated(port, gate);
        var received = new java.util.concurrent.atomic.AtomicInteger();
        Server server = null;
        try {
            io.grpc.Context.CancellableContext fanOut =
                    io.grpc.Context.current().withCancellation();
            java.util.List<com.google.common.util.concurrent.ListenableFuture<CheckReply>> quotes =
                    fanOut.call(() -> java.util.stream.IntStream.range(0, 100)
                            .mapToObj(i -> StockGrpc.newFutureStub(channel)
                                    .withDeadlineAfter(20, TimeUnit.SECONDS)
                                    .check(CHECK))
                            .toList());
            assertThat(quotes).noneMatch(java.util.concurrent.Future::isDone);

            fanOut.cancel(null);
            for (var quote : quotes) {
                Throwable ended = catchThrowableOfType(
                        java.util.concurrent.ExecutionException.class, () -> quote.get(5, TimeUnit.SECONDS));
                assertThat(Status.fromThrowable(ended.getCause()).getCode()).isEqualTo(Status.Code.CANCELLED);
            }

            server = stock(port, received);
            channel.resetConnectBackoff();
            assertThat(StockGrpc.newBlockingStub(channel)
                            .withDeadlineAfter(20, TimeUnit.SECONDS)
                            .check(CHECK)
                            .getQty())
                    .isEqualTo(1);
            assertThat(received).as("only the call made after the cancellation").hasValue(1);
        } finally {
            channel.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
            if (server != null) {
                server.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
            }
        }
    }
}
