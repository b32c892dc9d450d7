package dev.grpcops.client;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

import dev.grpcops.proto.chain.v1.CheckReply;
import dev.grpcops.proto.chain.v1.CheckRequest;
import dev.grpcops.proto.chain.v1.StockGrpc;
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
import java.util.concurrent.atomic.AtomicLong;
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
        return NettyServerBuilder.forAddress(new InetSocketAddress("127.0.0.1", port))
                .addService(new StockGrpc.StockImplBase() {
                    @Override
                    public void check(CheckRequest request, StreamObserver<CheckReply> responses) {
                        responses.onNext(CheckReply.newBuilder().setQty(1).build());
                        responses.onCompleted();
                    }
                })
                .build()
                .start();
    }

    @Test
    void aCallMadeBeforeTheReplicaListensWaitsForItInsteadOfFailing() throws Exception {
        int port = freePort();
        ReadinessGate gate = new ReadinessGate(Duration.ofSeconds(30));
        ManagedChannel channel = ManagedChannelBuilder.forTarget("list:///127.0.0.1:" + port)
                .usePlaintext()
                .intercept(gate)
                .build();
        gate.follow(channel);
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
        AtomicLong now = new AtomicLong();
        ReadinessGate gate = new ReadinessGate(Duration.ofSeconds(5), now::get);
        ManagedChannel channel = ManagedChannelBuilder.forTarget("list:///127.0.0.1:" + freePort())
                .usePlaintext()
                .intercept(gate)
                .build();
        gate.follow(channel);
        try {
            assertThat(gate.waiting()).isTrue();
            now.addAndGet(Duration.ofSeconds(6).toNanos());
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
}
