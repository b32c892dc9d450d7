package dev.grpcops.client;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;
import static org.awaitility.Awaitility.await;

import com.google.common.util.concurrent.ListenableFuture;
import dev.grpcops.admission.Caller;
import dev.grpcops.admission.Criticality;
import dev.grpcops.proto.chain.v1.CheckReply;
import dev.grpcops.proto.chain.v1.CheckRequest;
import dev.grpcops.proto.chain.v1.StockGrpc;
import dev.grpcops.testing.FakeClock;
import io.grpc.ConnectivityState;
import io.grpc.Context;
import io.grpc.ManagedChannel;
import io.grpc.Server;
import io.grpc.Status;
import io.grpc.inprocess.InProcessChannelBuilder;
import io.grpc.inprocess.InProcessServerBuilder;
import io.grpc.stub.ServerCallStreamObserver;
import io.grpc.stub.StreamObserver;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Queue;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Function;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * What a channel's cancellation budget sends and what it never does, over in-process gRPC with a
 * Stock that holds every call until it is cancelled: nothing for a caller that has left, nothing
 * for a call that is not on a connection, one caller's backlog not ahead of another's, a bounded
 * backlog, and a listener or timer that fails changing nothing a call does.
 */
@Timeout(30)
class CancellationBudgetRulesTests {

    @RegisterExtension
    final FakeClock clock = new FakeClock();

    private final String name = InProcessServerBuilder.generateName();
    /** The SKUs Stock received, in order, and those whose cancellation reached it. */
    private final Queue<String> received = new ConcurrentLinkedQueue<>();

    private final Queue<String> cancelled = new ConcurrentLinkedQueue<>();
    private final Map<CancellationBudget.Outcome, AtomicInteger> outcomes = new ConcurrentHashMap<>();
    private Server server;
    private ManagedChannel channel;

    @AfterEach
    void stop() throws InterruptedException {
        if (channel != null) {
            channel.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
        }
        if (server != null) {
            server.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
        }
        clock.forward(Duration.ofMinutes(1)); // whatever drain is still scheduled finds nothing to send
    }

    private void startServer() throws Exception {
        server = InProcessServerBuilder.forName(name)
                .directExecutor()
                .addService(new StockGrpc.StockImplBase() {
                    @Override
                    public void check(CheckRequest request, StreamObserver<CheckReply> responses) {
                        received.add(request.getSku());
                        ((ServerCallStreamObserver<CheckReply>) responses)
                                .setOnCancelHandler(() -> cancelled.add(request.getSku()));
                        if (request.getSku().equals("probe")) {
                            responses.onNext(
                                    CheckReply.newBuilder().setSku("probe").build());
                            responses.onCompleted();
                        }
                    }
                })
                .build()
                .start();
    }

    private CancellationBudget.Builder budget(double perSecond, double burst) {
        return CancellationBudget.builder()
                .perSecond(perSecond)
                .burst(burst)
                .nanoClock(clock.nanoClock())
                .scheduler(clock.scheduler())
                .listener(outcome -> outcomes.computeIfAbsent(outcome, o -> new AtomicInteger())
                        .incrementAndGet());
    }

    private ManagedChannel channel(CancellationBudget budget) {
        channel = InProcessChannelBuilder.forName(name)
                .directExecutor()
                .intercept(budget)
                .build();
        budget.follow(channel);
        return channel;
    }

    private int outcomes(CancellationBudget.Outcome outcome) {
        AtomicInteger count = outcomes.get(outcome);
        return count == null ? 0 : count.get();
    }

    private void probe() {
        assertThat(StockGrpc.newBlockingStub(channel)
                        .withDeadlineAfter(10, TimeUnit.SECONDS)
                        .check(CheckRequest.newBuilder().setSku("probe").build())
                        .getSku())
                .isEqualTo("probe");
    }

    private static ListenableFuture<CheckReply> check(ManagedChannel channel, String sku) {
        return StockGrpc.newFutureStub(channel)
                .withDeadlineAfter(20, TimeUnit.SECONDS)
                .check(CheckRequest.newBuilder().setSku(sku).build());
    }

    /** Calls made in a context of {@code caller} (admission's flow), which is then cancelled; returns them. */
    private static List<ListenableFuture<CheckReply>> callsThenLeave(
            String caller, int count, Function<Integer, ListenableFuture<CheckReply>> call) {
        Context.CancellableContext leaving = Context.current().withCancellation();
        Context served = Caller.of(caller, null, Criticality.DEFAULT).attachTo(leaving);
        List<ListenableFuture<CheckReply>> calls = new ArrayList<>();
        served.run(() -> {
            for (int i = 0; i < count; i++) {
                calls.add(call.apply(i));
            }
        });
        leaving.cancel(null);
        return calls;
    }

    private static void assertCancelled(List<ListenableFuture<CheckReply>> calls) {
        for (ListenableFuture<CheckReply> call : calls) {
            assertThat(call).isDone();
            assertThat(Status.fromThrowable(catchThrowable(call::get)).getCode())
                    .isEqualTo(Status.Code.CANCELLED);
        }
    }

    @Test
    void aCallMadeAfterItsCallerLeftIsNeverSent() throws Exception {
        startServer();
        ManagedChannel channel = channel(budget(1000, 500).build());
        probe();
        Context.CancellableContext left = Context.current().withCancellation();
        left.cancel(null);
        List<ListenableFuture<CheckReply>> calls = new ArrayList<>();
        left.run(() -> calls.add(check(channel, "after-the-caller-left")));

        assertCancelled(calls);
        assertThat(received).containsExactly("probe");
        assertThat(outcomes(CancellationBudget.Outcome.LOCAL)).isEqualTo(1);
        assertThat(outcomes(CancellationBudget.Outcome.SENT)).isZero();
    }

    /**
     * Calls held while the channel has no ready connection (here, waiting for ready before Stock is
     * up) have no stream to reset: cancelled, they end where they are, spending nothing of the
     * budget, and never reach Stock once it is up, however empty the budget was.
     */
    @Test
    void aCallHeldWithoutAConnectionIsCancelledWhereItIsAndNeverSent() throws Exception {
        ManagedChannel channel = channel(budget(0.001, 1).build());
        List<ListenableFuture<CheckReply>> held = callsThenLeave(
                "caller",
                3,
                i -> StockGrpc.newFutureStub(channel)
                        .withWaitForReady()
                        .withDeadlineAfter(20, TimeUnit.SECONDS)
                        .check(CheckRequest.newBuilder().setSku("held-" + i).build()));
        assertCancelled(held);
        assertThat(outcomes(CancellationBudget.Outcome.LOCAL)).isEqualTo(3);

        startServer();
        channel.resetConnectBackoff();
        await().atMost(Duration.ofSeconds(10)).until(() -> channel.getState(true) == ConnectivityState.READY);
        probe();
        assertThat(received).as("what reached Stock").containsExactly("probe");
        assertThat(outcomes(CancellationBudget.Outcome.DEFERRED)).isZero();
    }

    @Test
    void oneCallersBacklogDoesNotHoldBackAnothersCancellation() throws Exception {
        startServer();
        ManagedChannel channel = channel(budget(10, 1).build());
        probe();
        callsThenLeave("flood", 20, i -> check(channel, "flood-" + i));
        List<ListenableFuture<CheckReply>> polite = callsThenLeave("polite", 1, i -> check(channel, "polite"));
        assertCancelled(polite);
        assertThat(outcomes(CancellationBudget.Outcome.SENT)).isEqualTo(1);
        assertThat(outcomes(CancellationBudget.Outcome.DEFERRED)).isEqualTo(20);

        clock.forward(Duration.ofMillis(200)); // room for two more: one caller's each, in turn
        assertThat(cancelled).contains("polite");
        assertThat(cancelled).hasSize(3);
    }

    @Test
    void atMostMaxDeferredWaitAndTheLongestBacklogGivesUpItsOldest() throws Exception {
        startServer();
        CancellationBudget budget = budget(1, 1).maxDeferred(5).build();
        ManagedChannel channel = channel(budget);
        probe();
        callsThenLeave("flood", 1 + 8, i -> check(channel, "flood-" + i));
        callsThenLeave("polite", 1, i -> check(channel, "polite"));

        assertThat(outcomes(CancellationBudget.Outcome.DEFERRED)).isEqualTo(9);
        assertThat(outcomes(CancellationBudget.Outcome.DROPPED))
                .as("beyond 5 waiting")
                .isEqualTo(4);
        assertThat(budget.waiting()).isEqualTo(5);
        clock.forward(Duration.ofSeconds(2));
        assertThat(cancelled).as("the polite caller's, in its turn").contains("polite");
        clock.forward(Duration.ofSeconds(10));
        assertThat(budget.waiting()).isZero();
        assertThat(cancelled).doesNotContain("flood-1", "flood-2", "flood-3", "flood-4");
    }

    @Test
    void aListenerThatThrowsChangesNothingACallDoes() throws Exception {
        startServer();
        CancellationBudget budget = CancellationBudget.builder()
                .perSecond(1)
                .burst(1)
                .nanoClock(clock.nanoClock())
                .scheduler(clock.scheduler())
                .listener(outcome -> {
                    throw new IllegalStateException("a broken metrics listener");
                })
                .build();
        ManagedChannel channel = channel(budget);
        probe();
        List<ListenableFuture<CheckReply>> calls = callsThenLeave("caller", 3, i -> check(channel, "held-" + i));

        assertCancelled(calls); // the deferred ones too: their callers hear the end at once
        assertThat(cancelled).hasSize(1);
        clock.forward(Duration.ofSeconds(2));
        assertThat(cancelled).hasSize(3);
    }

    @Test
    void aTimerThatRefusesLeavesNoCancellationBehind() throws Exception {
        startServer();
        ScheduledExecutorService refusing = java.util.concurrent.Executors.newSingleThreadScheduledExecutor();
        refusing.shutdown();
        CancellationBudget budget = CancellationBudget.builder()
                .perSecond(1)
                .burst(1)
                .nanoClock(clock.nanoClock())
                .scheduler(refusing)
                .build();
        ManagedChannel channel = channel(budget);
        probe();
        assertThat(catchThrowable(() -> refusing.execute(() -> {}))).isInstanceOf(RejectedExecutionException.class);

        List<ListenableFuture<CheckReply>> first = callsThenLeave("caller", 3, i -> check(channel, "first-" + i));
        List<ListenableFuture<CheckReply>> later = callsThenLeave("caller", 2, i -> check(channel, "later-" + i));

        assertCancelled(first);
        assertCancelled(later);
        await().atMost(Duration.ofSeconds(5)).until(() -> cancelled.size() == 5);
        assertThat(budget.waiting()).isZero();
    }
}
