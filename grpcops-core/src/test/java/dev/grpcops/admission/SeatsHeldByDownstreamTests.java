package dev.grpcops.admission;

import static org.assertj.core.api.Assertions.assertThat;

import com.google.common.util.concurrent.FutureCallback;
import com.google.common.util.concurrent.Futures;
import com.google.common.util.concurrent.ListenableFuture;
import com.google.common.util.concurrent.MoreExecutors;
import dev.grpcops.client.CancellationBudget;
import dev.grpcops.proto.chain.v1.CheckReply;
import dev.grpcops.proto.chain.v1.CheckRequest;
import dev.grpcops.proto.chain.v1.StockGrpc;
import dev.grpcops.testing.FakeClock;
import io.grpc.ManagedChannel;
import io.grpc.Server;
import io.grpc.ServerInterceptors;
import io.grpc.inprocess.InProcessChannelBuilder;
import io.grpc.inprocess.InProcessServerBuilder;
import io.grpc.stub.ServerCallStreamObserver;
import io.grpc.stub.StreamObserver;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * design §16: a served call's seat is held until the calls it made downstream have ended, so that a
 * caller cancelling fan-outs cannot leave downstream work running beside its seats. A front server
 * with one seat calls a Stock that holds its calls, through a channel whose cancellation budget
 * sends one cancellation and defers the rest (its clock stands still).
 */
@Timeout(30)
class SeatsHeldByDownstreamTests {

    @RegisterExtension
    final FakeClock clock = new FakeClock();

    /** Downstream: holds each Check until the test answers it; counts what its callers cancelled. */
    private final BlockingQueue<StreamObserver<CheckReply>> held = new LinkedBlockingQueue<>();

    private final AtomicInteger downstreamCancelled = new AtomicInteger();
    private final AtomicInteger frontStarted = new AtomicInteger();
    private final List<AutoCloseable> closeables = new ArrayList<>();
    private Admission admission;
    private ManagedChannel front;

    @BeforeEach
    void start() throws Exception {
        String stockName = InProcessServerBuilder.generateName();
        Server stock = InProcessServerBuilder.forName(stockName)
                .directExecutor()
                .addService(new StockGrpc.StockImplBase() {
                    @Override
                    public void check(CheckRequest request, StreamObserver<CheckReply> reply) {
                        ((ServerCallStreamObserver<CheckReply>) reply)
                                .setOnCancelHandler(downstreamCancelled::incrementAndGet);
                        held.add(reply);
                    }
                })
                .build()
                .start();
        closeables.add(() -> stock.shutdownNow().awaitTermination(5, TimeUnit.SECONDS));
        ManagedChannel toStock = InProcessChannelBuilder.forName(stockName)
                .directExecutor()
                .intercept(CancellationBudget.builder()
                        .perSecond(1)
                        .burst(1)
                        .nanoClock(clock.nanoClock())
                        .scheduler(clock.scheduler())
                        .build())
                .build();
        closeables.add(() -> toStock.shutdownNow().awaitTermination(5, TimeUnit.SECONDS));

        admission = Admission.builder(AdmissionConfig.builder()
                        .limit(1)
                        .levels(List.of(PriorityLevelConfig.of("default", 1)))
                        .maxWait(Duration.ofSeconds(10))
                        .retryPushback(Duration.ofSeconds(1), Duration.ofSeconds(32))
                        .build())
                .build();
        Map<Criticality, String> levels = new java.util.EnumMap<>(Criticality.class);
        for (Criticality criticality : Criticality.values()) {
            levels.put(criticality, "default");
        }
        String frontName = InProcessServerBuilder.generateName();
        Server frontServer = InProcessServerBuilder.forName(frontName)
                .directExecutor()
                .addService(ServerInterceptors.intercept(
                        new StockGrpc.StockImplBase() {
                            /** Answers with what Stock answers (one call downstream). */
                            @Override
                            public void check(CheckRequest request, StreamObserver<CheckReply> reply) {
                                frontStarted.incrementAndGet();
                                ListenableFuture<CheckReply> downstream =
                                        StockGrpc.newFutureStub(toStock).check(request);
                                Futures.addCallback(
                                        downstream,
                                        new FutureCallback<>() {
                                            @Override
                                            public void onSuccess(CheckReply answer) {
                                                reply.onNext(answer);
                                                reply.onCompleted();
                                            }

                                            @Override
                                            public void onFailure(Throwable failure) {
                                                reply.onError(failure);
                                            }
                                        },
                                        MoreExecutors.directExecutor());
                            }
                        },
                        AdmissionInterceptors.server(admission)
                                .policy(CallerPolicy.builder()
                                        .criticalityLevels(levels)
                                        .build())
                                .build()))
                .build()
                .start();
        closeables.add(() -> frontServer.shutdownNow().awaitTermination(5, TimeUnit.SECONDS));
        front = InProcessChannelBuilder.forName(frontName).directExecutor().build();
        closeables.add(() -> front.shutdownNow().awaitTermination(5, TimeUnit.SECONDS));
    }

    @AfterEach
    void stop() throws Exception {
        for (int i = closeables.size() - 1; i >= 0; i--) {
            closeables.get(i).close();
        }
        clock.forward(Duration.ofMinutes(1)); // deferred cancellations of calls that have ended: none left
    }

    private static void await(String what, java.util.concurrent.Callable<Boolean> condition) {
        Awaitility.await(what)
                .atMost(Duration.ofSeconds(10))
                .pollInterval(Duration.ofMillis(5))
                .until(condition);
    }

    private ListenableFuture<CheckReply> check(String sku) {
        return StockGrpc.newFutureStub(front)
                .check(CheckRequest.newBuilder().setSku(sku).build());
    }

    @Test
    void aCancelledCallsSeatIsFreedOnceItsDownstreamCallHasEnded() throws Exception {
        // The budget has room: the cancellation goes downstream at once, and the seat is free.
        ListenableFuture<CheckReply> first = check("a");
        await("the first call downstream", () -> held.size() == 1);
        first.cancel(true);
        await("its cancellation downstream", () -> downstreamCancelled.get() == 1);
        held.clear();
        ListenableFuture<CheckReply> second = check("b");
        await("the second call seated at once", () -> frontStarted.get() == 2);

        // Over the budget: the cancellation waits, and so does the seat, while Stock works on.
        await("the second call downstream", () -> held.size() == 1);
        second.cancel(true);
        ListenableFuture<CheckReply> third = check("c");
        await("the third call to queue", () -> admission.level("default").inQueue() == 1);
        assertThat(frontStarted)
                .as("the seat is held by the work left downstream")
                .hasValue(2);
        assertThat(downstreamCancelled).hasValue(1);

        StreamObserver<CheckReply> left = held.take();
        left.onNext(CheckReply.getDefaultInstance());
        left.onCompleted();
        await("the third call seated once Stock answered the second", () -> frontStarted.get() == 3);
        StreamObserver<CheckReply> answer = held.poll(10, TimeUnit.SECONDS);
        assertThat(answer).isNotNull();
        answer.onNext(CheckReply.newBuilder().setSku("c").build());
        answer.onCompleted();
        assertThat(third.get(10, TimeUnit.SECONDS).getSku()).isEqualTo("c");
        await("no seat kept", () -> admission.level("default").executingSeats() == 0);
    }
}
