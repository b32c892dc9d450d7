package dev.grpcops.client;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.google.common.util.concurrent.ListenableFuture;
import dev.grpcops.proto.chain.v1.CheckReply;
import dev.grpcops.proto.chain.v1.CheckRequest;
import dev.grpcops.proto.chain.v1.StockGrpc;
import io.grpc.Attributes;
import io.grpc.Context;
import io.grpc.ManagedChannel;
import io.grpc.Server;
import io.grpc.ServerTransportFilter;
import io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder;
import io.grpc.netty.shaded.io.grpc.netty.NettyServerBuilder;
import io.grpc.stub.StreamObserver;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * A caller cancelling a fan-out of a thousand calls at once, over one connection to a server whose
 * rapid-reset guard allows 200 RST_STREAM frames a second (SPEC §16): with the channel's cancellation
 * budget the connection, shared with everyone else's calls, stays up; without it the server closes it.
 */
@Timeout(60)
class CancellationBudgetTests {

    private static final int FAN_OUT = 1000;

    private final ScheduledExecutorService answers = Executors.newSingleThreadScheduledExecutor();
    private final AtomicInteger connectionsClosed = new AtomicInteger();
    private final AtomicInteger sent = new AtomicInteger();
    private final AtomicInteger withheld = new AtomicInteger();
    private Server server;
    private ManagedChannel channel;

    @BeforeEach
    void start() throws Exception {
        server = NettyServerBuilder.forAddress(new InetSocketAddress("127.0.0.1", 0))
                .maxRstFramesPerWindow(200, 1)
                .addTransportFilter(new ServerTransportFilter() {
                    @Override
                    public void transportTerminated(Attributes transportAttrs) {
                        connectionsClosed.incrementAndGet();
                    }
                })
                .addService(new StockGrpc.StockImplBase() {
                    @Override
                    public void check(CheckRequest request, StreamObserver<CheckReply> responses) {
                        // The fan-out's calls are answered after 5 s, long after the caller cancelled
                        // them, as a downstream working on them does; other calls at once.
                        long delayMs = request.getSku().startsWith("fan-") ? 5000 : 0;
                        answers.schedule(
                                () -> {
                                    responses.onNext(CheckReply.newBuilder()
                                            .setSku(request.getSku())
                                            .build());
                                    responses.onCompleted();
                                },
                                delayMs,
                                TimeUnit.MILLISECONDS);
                    }
                })
                .build()
                .start();
    }

    @AfterEach
    void stop() throws InterruptedException {
        if (channel != null) {
            channel.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
        }
        server.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
        answers.shutdownNow();
    }

    private ManagedChannel channel(CancellationBudget budget) {
        NettyChannelBuilder builder =
                NettyChannelBuilder.forAddress("127.0.0.1", server.getPort()).usePlaintext();
        if (budget != null) {
            builder.intercept(budget);
        }
        channel = builder.build();
        StockGrpc.newBlockingStub(channel)
                .withDeadlineAfter(10, TimeUnit.SECONDS)
                .check(CheckRequest.newBuilder().setSku("connect").build());
        return channel;
    }

    /** A thousand calls started in one caller's context, which is then cancelled; returns them. */
    private List<ListenableFuture<CheckReply>> fanOutThenCancel(ManagedChannel channel) {
        Context.CancellableContext caller = Context.current().withCancellation();
        List<ListenableFuture<CheckReply>> calls = new ArrayList<>();
        caller.run(() -> {
            for (int i = 0; i < FAN_OUT; i++) {
                calls.add(StockGrpc.newFutureStub(channel)
                        .withDeadlineAfter(10, TimeUnit.SECONDS)
                        .check(CheckRequest.newBuilder().setSku("fan-" + i).build()));
            }
        });
        caller.cancel(null);
        return calls;
    }

    @Test
    void aCancelledFanOutKeepsTheSharedConnectionWithinTheBudget() throws Exception {
        ManagedChannel channel = channel(CancellationBudget.builder()
                .perSecond(100)
                .burst(50)
                .listener(wasSent -> (wasSent ? sent : withheld).incrementAndGet())
                .build());
        List<ListenableFuture<CheckReply>> calls = fanOutThenCancel(channel);

        await().atMost(Duration.ofSeconds(10)).until(() -> sent.get() + withheld.get() == FAN_OUT);
        // At once, as gRPC ends a call its caller cancelled, whether or not it went downstream.
        await().atMost(Duration.ofSeconds(5)).until(() -> calls.stream().allMatch(ListenableFuture::isDone));
        assertThat(calls)
                .as("the caller sees every call cancelled")
                .allMatch(
                        call -> io.grpc.Status.fromThrowable(org.assertj.core.api.Assertions.catchThrowable(call::get))
                                        .getCode()
                                == io.grpc.Status.Code.CANCELLED);
        assertThat(sent.get())
                .as("cancellations sent downstream: the burst, and what refilled meanwhile")
                .isBetween(50, 100);
        // The withheld ones end by their answers, later, on the same connection, which every other call keeps using.
        assertThat(StockGrpc.newBlockingStub(channel)
                        .withDeadlineAfter(10, TimeUnit.SECONDS)
                        .check(CheckRequest.newBuilder().setSku("after").build())
                        .getSku())
                .isEqualTo("after");
        assertThat(connectionsClosed).as("connections the server closed").hasValue(0);
    }

    /** The control: the same fan-out cancelled with no budget trips the guard. */
    @Test
    void withoutTheBudgetTheServerClosesTheConnection() {
        ManagedChannel channel = channel(null);
        fanOutThenCancel(channel);
        await().atMost(Duration.ofSeconds(10)).until(() -> connectionsClosed.get() >= 1);
    }

    @Test
    void aCallThatHasEndedCostsTheBudgetNothing() throws Exception {
        ManagedChannel channel = channel(CancellationBudget.builder()
                .perSecond(1)
                .burst(1)
                .listener(wasSent -> (wasSent ? sent : withheld).incrementAndGet())
                .build());
        ListenableFuture<CheckReply> answered = StockGrpc.newFutureStub(channel)
                .withDeadlineAfter(10, TimeUnit.SECONDS)
                .check(CheckRequest.newBuilder().setSku("done").build());
        answered.get(10, TimeUnit.SECONDS);
        answered.cancel(true);
        assertThat(sent.get() + withheld.get()).isZero();
    }
}
