package dev.grpcops.admission;

import static org.assertj.core.api.Assertions.assertThat;

import com.google.common.util.concurrent.ListenableFuture;
import dev.grpcops.ServerStack;
import dev.grpcops.fault.FaultInjection;
import dev.grpcops.fault.Faults;
import dev.grpcops.proto.chain.v1.CheckReply;
import dev.grpcops.proto.chain.v1.CheckRequest;
import dev.grpcops.proto.chain.v1.StockGrpc;
import dev.grpcops.testing.FakeClock;
import dev.grpcops.warmup.WarmUp;
import dev.grpcops.warmup.WarmUpResult;
import io.grpc.Status;
import io.grpc.stub.StreamObserver;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The adaptive limit behind a real gRPC server (in-process, direct executor, one fake clock for
 * admission and fault injection): what it takes as a sample and what it leaves out (design §19).
 */
@Timeout(30)
class AdaptiveLimitInterceptorTests {

    @RegisterExtension
    final FakeClock clock = new FakeClock();

    private Admission admission;
    private FaultInjection faults;
    private HopWithDownstream hop;

    @BeforeEach
    void start() throws Exception {
        admission = Admission.builder(AdmissionConfig.builder()
                        .limit(16)
                        // No queues: a call that finds no seat is rejected at once, and fast.
                        .levels(PriorityLevelConfig.builder("default").queues(0).build())
                        .adaptiveLimit(AdaptiveLimit.builder()
                                .minLimit(8)
                                .maxLimit(64)
                                .window(Duration.ofSeconds(1))
                                .build())
                        .build())
                .nanoClock(clock.nanoClock())
                .timer(clock.timer())
                .build();
        faults = FaultInjection.builder()
                .nanoClock(clock.nanoClock())
                .scheduler(clock.scheduler())
                .build();
        ServerStack stack = ServerStack.builder()
                .warmUp()
                .admission(AdmissionInterceptors.server(admission)
                        .policy(CallerPolicy.builder()
                                .everyCriticalityTo("default")
                                .build())
                        .build())
                .faults(faults)
                .build();
        hop = new HopWithDownstream(stack, clock);
    }

    @AfterEach
    void close() throws Exception {
        hop.close();
    }

    /**
     * One round under a flood: as many calls as there are seats and four more (rejected at once),
     * each served for {@code serviceMillis} and answered with {@code status}; then the rest of 100 ms.
     */
    private void round(long serviceMillis, Status status) throws Exception {
        List<ListenableFuture<CheckReply>> calls = new ArrayList<>();
        int seats = admission.limit();
        for (int i = 0; i < seats + 4; i++) {
            calls.add(StockGrpc.newFutureStub(hop.toHop()).check(CheckRequest.getDefaultInstance()));
        }
        clock.forward(Duration.ofMillis(serviceMillis));
        HopWithDownstream.Arrived arrived;
        while ((arrived = hop.arrived().poll()) != null) {
            StreamObserver<CheckReply> reply = arrived.reply();
            if (status.isOk()) {
                reply.onNext(CheckReply.getDefaultInstance());
                reply.onCompleted();
            } else {
                reply.onError(status.asRuntimeException());
            }
        }
        // Fault injection's held answers go out on the way.
        clock.forward(Duration.ofMillis(
                Math.max(0, 100 - serviceMillis) + faults.current().delay().toMillis()));
        for (ListenableFuture<CheckReply> call : calls) {
            assertThat(call.isDone()).as("every call answered").isTrue();
        }
    }

    /**
     * As {@link #round}, for a hop that works {@code ownMillis}, then asks the downstream server and
     * answers with its answer, {@code downstreamMillis} later.
     */
    private void delegatingRound(long ownMillis, long downstreamMillis) throws Exception {
        List<ListenableFuture<CheckReply>> calls = new ArrayList<>();
        int seats = admission.limit();
        for (int i = 0; i < seats + 4; i++) {
            calls.add(StockGrpc.newFutureStub(hop.toHop()).check(CheckRequest.getDefaultInstance()));
        }
        clock.forward(Duration.ofMillis(ownMillis));
        HopWithDownstream.Arrived arrived;
        while ((arrived = hop.arrived().poll()) != null) {
            StreamObserver<CheckReply> reply = arrived.reply();
            // The answer passes straight on to the caller.
            arrived.context()
                    .run(() -> StockGrpc.newStub(hop.toDownstream()).check(CheckRequest.getDefaultInstance(), reply));
        }
        clock.forward(Duration.ofMillis(downstreamMillis));
        StreamObserver<CheckReply> reply;
        while ((reply = hop.downstreamHeld().poll()) != null) {
            reply.onNext(CheckReply.getDefaultInstance());
            reply.onCompleted();
        }
        clock.forward(Duration.ofMillis(Math.max(0, 100 - ownMillis - downstreamMillis)));
        for (ListenableFuture<CheckReply> answered : calls) {
            assertThat(answered.isDone()).as("every call answered").isTrue();
        }
    }

    private int seconds(int seconds, long serviceMillis, Status status) throws Exception {
        long until = clock.nanoTime() + TimeUnit.SECONDS.toNanos(seconds);
        while (clock.nanoTime() < until) {
            round(serviceMillis, status);
        }
        return admission.limit();
    }

    @Test
    void underAFloodAnsweredAtItsBaselineTheLimitGrows() throws Exception {
        int after = seconds(5, 10, Status.OK);
        assertThat(after).isGreaterThan(16);
        assertThat(admission.level("default").nominalSeats())
                .as("the level's share follows")
                .isEqualTo(after);
    }

    @Test
    void answersThatTakeLongerMakeTheLimitFall() throws Exception {
        int before = seconds(5, 10, Status.OK);
        int after = seconds(5, 60, Status.OK);
        assertThat(after).isLessThan(before);
    }

    @Test
    void anInjectedDelayIsNoSampleTheLimitDoesNotFallForIt() throws Exception {
        int before = seconds(5, 10, Status.OK);
        faults.set(Faults.builder().delay(Duration.ofMillis(200)).build());

        int after = seconds(8, 10, Status.OK);

        assertThat(after)
                .as("each answer held 200 ms by fault injection, 20 times the baseline, yet the limit holds")
                .isGreaterThanOrEqualTo(before);
    }

    @Test
    void timeWaitingOnDownstreamCallsIsNoSampleASlowerDependencyDoesNotLowerTheLimit() throws Exception {
        int before = seconds(5, 10, Status.OK);

        // The same 10 ms of its own work, then 200 ms waiting on its downstream call, 21 times the baseline.
        long until = clock.nanoTime() + TimeUnit.SECONDS.toNanos(8);
        while (clock.nanoTime() < until) {
            delegatingRound(10, 200);
        }

        assertThat(admission.limit())
                .as("fewer seats here would not make the dependency faster: the calls working keep"
                        + " theirs, and the calls waiting get seats beside them")
                .isGreaterThan(before);
    }

    @Test
    void ownWorkThatTakesLongerStillMakesTheLimitFallWhenTheCallAlsoWaitsDownstream() throws Exception {
        int before = seconds(5, 10, Status.OK);

        // 60 ms of its own work, six times the baseline, then 20 ms downstream: the calls working fall,
        // and the seats with them, though each seat now also covers a quarter of its time waiting.
        long until = clock.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (clock.nanoTime() < until) {
            delegatingRound(60, 20);
        }

        assertThat(admission.limit()).isLessThan(before);
    }

    /**
     * The process's own warm-up calls run on a JIT-cold server: none is a sample, so the first probe
     * (the minimum seats until ten calls have answered) still waits for callers' calls.
     */
    @Test
    void warmUpCallsAreNoSamplesTheFirstProbeWaitsForCallersCalls() throws Exception {
        WarmUp warmUp = WarmUp.builder()
                .call(StockGrpc.getCheckMethod(), CheckRequest.getDefaultInstance(), 20)
                .build();
        CompletableFuture<WarmUpResult> run = warmUp.run(hop.toHop());
        long giveUp = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
        while (!run.isDone() && System.nanoTime() < giveUp) {
            HopWithDownstream.Arrived arrived = hop.arrived().poll();
            if (arrived == null) {
                Thread.onSpinWait();
                continue;
            }
            clock.forward(Duration.ofMillis(10));
            arrived.reply().onNext(CheckReply.getDefaultInstance());
            arrived.reply().onCompleted();
        }
        assertThat(run.get(5, TimeUnit.SECONDS).statuses()).containsEntry(Status.Code.OK, 20L);

        assertThat(admission.limit()).as("still probing with the minimum seats").isEqualTo(8);
        assertThat(seconds(1, 10, Status.OK)).as("callers' calls end the probe").isGreaterThanOrEqualTo(16);
    }

    @Test
    void failedAndRejectedCallsAreNoSamplesTheirSpeedDoesNotGrowTheLimit() throws Exception {
        int before = seconds(5, 10, Status.OK);

        // Answered at once, each one a tenth of the baseline, but failed: no sign the server is fast.
        int after = seconds(5, 1, Status.UNAVAILABLE);

        assertThat(after).isEqualTo(before);
    }
}
