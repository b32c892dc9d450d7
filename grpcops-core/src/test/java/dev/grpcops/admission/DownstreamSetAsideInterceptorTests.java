package dev.grpcops.admission;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.google.common.util.concurrent.ListenableFuture;
import dev.grpcops.ServerStack;
import dev.grpcops.budget.BudgetRules;
import dev.grpcops.proto.chain.v1.CheckReply;
import dev.grpcops.proto.chain.v1.CheckRequest;
import dev.grpcops.proto.chain.v1.StockGrpc;
import dev.grpcops.testing.FakeClock;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.stub.StreamObserver;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * A hop that calls downstream, with its admission built by {@code callsDownstream(rules)}: the
 * allowance of a queued call already sets min-downstream aside, so the work it is judged to need
 * is its own, not the time its hop spends waiting downstream as well (design §19). In front of a real
 * gRPC server (in-process, direct executor), the downstream calls counted by the channel's
 * cancellation budget, as the services' channels do, all on one fake clock.
 */
@Timeout(30)
class DownstreamSetAsideInterceptorTests {

    /** Each call's own work, then its wait downstream: the hop's seat turns over every 4 s. */
    private static final Duration OWN = Duration.ofSeconds(1);

    private static final Duration DOWNSTREAM = Duration.ofSeconds(3);

    private static final BudgetRules RULES = BudgetRules.builder()
            .reserve(Duration.ofMillis(10))
            .minDownstream(DOWNSTREAM)
            .build();

    @RegisterExtension
    final FakeClock clock = new FakeClock();

    private final List<String> rejections = new CopyOnWriteArrayList<>();
    private Admission admission;
    private HopWithDownstream hop;

    @BeforeEach
    void start() throws Exception {
        admission = Admission.builder(AdmissionConfig.builder()
                        .limit(1)
                        .levels(List.of(PriorityLevelConfig.of("default", 1)))
                        .maxWait(Duration.ofSeconds(30))
                        .build())
                .listener(new AdmissionListener() {
                    @Override
                    public void rejected(String levelName, RejectReason reason) {
                        rejections.add(reason.label());
                    }
                })
                .nanoClock(clock.nanoClock())
                .timer(clock.timer())
                .build();
        ServerStack stack = ServerStack.builder()
                .admission(AdmissionInterceptors.server(admission)
                        .policy(CallerPolicy.builder()
                                .everyCriticalityTo("default")
                                .build())
                        .callsDownstream(RULES)
                        .build())
                .build();
        hop = new HopWithDownstream(stack, clock);

        // The level learns its calls: 4 s in the seat each, of which 1 s is the hop's own work.
        for (int i = 0; i < 40; i++) {
            ListenableFuture<CheckReply> call = check(Duration.ofSeconds(30));
            serveTheCallInTheSeat();
            assertThat(call.isDone()).as("answered").isTrue();
        }
        assertThat(rejections).isEmpty();
    }

    @AfterEach
    void close() throws Exception {
        hop.close();
    }

    private ListenableFuture<CheckReply> check(Duration deadline) {
        return StockGrpc.newFutureStub(hop.toHop())
                .withDeadlineAfter(deadline.toMillis(), TimeUnit.MILLISECONDS)
                .check(CheckRequest.getDefaultInstance());
    }

    /** The call in the seat works 1 s, asks downstream, and passes on the answer that comes 3 s later. */
    private void serveTheCallInTheSeat() {
        HopWithDownstream.Arrived call = hop.arrived().poll();
        assertThat(call).as("a call in the seat").isNotNull();
        clock.forward(OWN);
        call.context()
                .run(() ->
                        StockGrpc.newStub(hop.toDownstream()).check(CheckRequest.getDefaultInstance(), call.reply()));
        clock.forward(DOWNSTREAM);
        StreamObserver<CheckReply> reply = hop.downstreamHeld().poll();
        assertThat(reply).as("the downstream call").isNotNull();
        reply.onNext(CheckReply.getDefaultInstance());
        reply.onCompleted();
    }

    @Test
    void aQueuedCallWhoseAllowanceCoversItsOwnWorkRunsThoughTheHopsWholeServiceTimeIsLonger() throws Exception {
        ListenableFuture<CheckReply> first = check(Duration.ofSeconds(30));
        // 10 s: 6.99 s of allowance (less reserve and min-downstream). After its 4 s turn in the queue,
        // 2.99 s are left: not the 4 s the hop's calls hold a seat, but more than their 1 s of own work.
        ListenableFuture<CheckReply> queued = check(Duration.ofSeconds(10));
        assertThat(rejections).as("not refused when it came").isEmpty();
        assertThat(admission.level("default").inQueue()).isOne();

        serveTheCallInTheSeat();
        first.get(5, TimeUnit.SECONDS);
        serveTheCallInTheSeat();

        assertThat(queued.get(5, TimeUnit.SECONDS)).isNotNull();
        assertThat(rejections)
                .as("neither infeasible when queued nor cannot-finish at its turn")
                .isEmpty();
    }

    @Test
    void aCallWhoseAllowanceCannotCoverItsWaitAndOwnWorkIsStillTurnedAwayAtOnce() throws Exception {
        ListenableFuture<CheckReply> first = check(Duration.ofSeconds(30));
        // 7 s: 3.99 s of allowance, less than its predicted 4 s wait and 1 s of own work.
        ListenableFuture<CheckReply> queued = check(Duration.ofSeconds(7));

        assertThatThrownBy(() -> queued.get(5, TimeUnit.SECONDS))
                .cause()
                .isInstanceOf(StatusRuntimeException.class)
                .satisfies(
                        e -> assertThat(((StatusRuntimeException) e).getStatus().getCode())
                                .as("another replica may make it")
                                .isEqualTo(Status.Code.RESOURCE_EXHAUSTED));
        assertThat(rejections).containsExactly("deadline-infeasible");
        serveTheCallInTheSeat();
        first.get(5, TimeUnit.SECONDS);
        assertThat(hop.arrived()).as("its handler never ran").isEmpty();
    }
}
