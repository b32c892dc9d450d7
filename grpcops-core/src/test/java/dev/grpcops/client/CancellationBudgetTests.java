package dev.grpcops.client;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.google.common.util.concurrent.ListenableFuture;
import dev.grpcops.proto.chain.v1.CheckReply;
import dev.grpcops.proto.chain.v1.CheckRequest;
import dev.grpcops.proto.chain.v1.StockGrpc;
import dev.grpcops.testing.FakeClock;
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
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * A caller cancelling a fan-out of a thousand calls at once, over one connection to a server whose
 * rapid-reset guard allows 200 RST_STREAM frames a second (design §16): with the channel's cancellation
 * budget the connection, shared with everyone else's calls, stays up; without it the server closes it.
 */
@Timeout(60)
class CancellationBudgetTests {

    private static final int FAN_OUT = 1000;

    private final ScheduledExecutorService answers = Executors.newSingleThreadScheduledExecutor();
    private final AtomicInteger connectionsClosed = new AtomicInteger();

    @RegisterExtension
    final FakeClock clock = new FakeClock();

    private final Map<CancellationBudget.Outcome, AtomicInteger> outcomes = new ConcurrentHashMap<>();
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
        clock.forward(Duration.ofMinutes(1)); // deferred cancellations of calls that ended: none sent
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

    /** A budget on the fake clock whose outcomes this test counts. */
    private CancellationBudget budget(double perSecond, double burst) {
        return CancellationBudget.builder()
                .perSecond(perSecond)
                .burst(burst)
                .nanoClock(clock.nanoClock())
                .scheduler(clock.scheduler())
                .listener(outcome -> outcomes.computeIfAbsent(outcome, o -> new AtomicInteger())
                        .incrementAndGet())
                .build();
    }

    private int outcomes(CancellationBudget.Outcome outcome) {
        AtomicInteger count = outcomes.get(outcome);
        return count == null ? 0 : count.get();
    }

    @Test
    void aCancelledFanOutKeepsTheSharedConnectionWithinTheBudget() throws Exception {
        ManagedChannel channel = channel(budget(100, 50));
        List<ListenableFuture<CheckReply>> calls = fanOutThenCancel(channel);

        await().atMost(Duration.ofSeconds(10))
                .until(() -> outcomes(CancellationBudget.Outcome.SENT) + outcomes(CancellationBudget.Outcome.DEFERRED)
                        == FAN_OUT);
        assertThat(outcomes(CancellationBudget.Outcome.SENT))
                .as("sent at once: the burst")
                .isEqualTo(50);
        // At once, as gRPC ends a call its caller cancelled, whether or not it went downstream.
        await().atMost(Duration.ofSeconds(5)).until(() -> calls.stream().allMatch(ListenableFuture::isDone));
        assertThat(calls)
                .as("the caller sees every call cancelled")
                .allMatch(
                        call -> io.grpc.Status.fromThrowable(org.assertj.core.api.Assertions.catchThrowable(call::get))
                                        .getCode()
                                == io.grpc.Status.Code.CANCELLED);

        clock.forward(Duration.ofSeconds(1));
        assertThat(outcomes(CancellationBudget.Outcome.SENT_LATER))
                .as("deferred ones sent a second later: the budget's rate")
                .isEqualTo(100);
        // The connection every other call uses is still there.
        assertThat(StockGrpc.newBlockingStub(channel)
                        .withDeadlineAfter(10, TimeUnit.SECONDS)
                        .check(CheckRequest.newBuilder().setSku("after").build())
                        .getSku())
                .isEqualTo("after");
        assertThat(connectionsClosed).as("connections the server closed").hasValue(0);
    }

    /** A deferred cancellation whose call ended downstream meanwhile costs the budget nothing. */
    @Test
    void aDeferredCancellationOfACallThatEndedMeanwhileIsNotSent() throws Exception {
        CancellationBudget budget = budget(1, 1);
        ManagedChannel channel = channel(budget);
        Context.CancellableContext caller = Context.current().withCancellation();
        List<ListenableFuture<CheckReply>> calls = new ArrayList<>();
        caller.run(() -> {
            calls.add(StockGrpc.newFutureStub(channel)
                    .withDeadlineAfter(10, TimeUnit.SECONDS)
                    .check(CheckRequest.newBuilder().setSku("fan-held").build()));
            calls.add(StockGrpc.newFutureStub(channel)
                    .withDeadlineAfter(2, TimeUnit.SECONDS)
                    .check(CheckRequest.newBuilder().setSku("fan-held").build()));
        });
        caller.cancel(null);
        await().atMost(Duration.ofSeconds(5)).until(() -> calls.stream().allMatch(ListenableFuture::isDone));
        assertThat(outcomes(CancellationBudget.Outcome.SENT)).isEqualTo(1);
        assertThat(outcomes(CancellationBudget.Outcome.DEFERRED)).isEqualTo(1);

        assertThat(budget.waiting()).isEqualTo(1);
        // The deferred call's 2 s deadline passes downstream before the budget has room again.
        await().atMost(Duration.ofSeconds(10)).until(() -> budget.waiting() == 0);
        clock.forward(Duration.ofSeconds(1));
        assertThat(outcomes(CancellationBudget.Outcome.SENT_LATER)).isZero();
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
        ManagedChannel channel = channel(budget(1, 1));
        ListenableFuture<CheckReply> answered = StockGrpc.newFutureStub(channel)
                .withDeadlineAfter(10, TimeUnit.SECONDS)
                .check(CheckRequest.newBuilder().setSku("done").build());
        answered.get(10, TimeUnit.SECONDS);
        answered.cancel(true);
        assertThat(outcomes).isEmpty();
    }
}
