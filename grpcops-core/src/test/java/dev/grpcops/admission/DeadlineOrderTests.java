package dev.grpcops.admission;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.MethodSource;

/** Earliest deadline first within a fair queue, and the answer at dequeue, on a fake clock (design §19). */
class DeadlineOrderTests {

    /** Not registered as an extension: calls still queued at a test's end keep their time-outs pending. */
    private final dev.grpcops.testing.FakeClock time = new dev.grpcops.testing.FakeClock();

    private final List<TestCall> started = new ArrayList<>();
    private final List<String> rejected = new ArrayList<>();

    private Admission admission(QueueOrder order) {
        return Admission.builder(AdmissionConfig.builder()
                        .limit(1)
                        .levels(List.of(PriorityLevelConfig.of("default", 1)))
                        .maxWait(Duration.ofSeconds(10))
                        .queueOrder(order)
                        .build())
                .listener(new AdmissionListener() {
                    @Override
                    public void rejected(String level, RejectReason reason) {
                        rejected.add(reason.label());
                    }
                })
                .nanoClock(time::nanoTime)
                .timer(time.timer())
                .build();
    }

    private TestCall offer(Admission admission, String flow, long allowanceMillis) {
        return new TestCall(admission.level("default"), flow, allowanceMillis, started).offer();
    }

    /** Allowances of the calls queued behind the one seat, in the order they came; the order they are served in. */
    static Stream<Arguments> orders() {
        return Stream.of(
                Arguments.of(QueueOrder.DEADLINE, List.of(900L, 300L, 600L), List.of(300L, 600L, 900L)),
                Arguments.of(QueueOrder.DEADLINE, List.of(500L, 500L, 200L), List.of(200L, 500L, 500L)),
                Arguments.of(QueueOrder.ARRIVAL, List.of(900L, 300L, 600L), List.of(900L, 300L, 600L)));
    }

    @ParameterizedTest(name = "{0}: queued {1}, served {2}")
    @MethodSource("orders")
    void oneFlowsWaitingCallsAreServedInTheQueuesOrder(QueueOrder order, List<Long> queued, List<Long> served) {
        Admission admission = admission(order);
        TestCall running = offer(admission, "caller", 10_000);
        List<TestCall> waiting = new ArrayList<>();
        for (long allowance : queued) {
            waiting.add(offer(admission, "caller", allowance));
        }
        started.clear();
        for (int i = 0; i < queued.size(); i++) {
            time.forwardMillis(2);
            running.release();
            running = started.get(started.size() - 1);
        }

        assertThat(started).extracting(call -> call.allowanceNanos / 1_000_000L).containsExactlyElementsOf(served);
        assertThat(rejected).isEmpty();
    }

    @Test
    void equalDeadlinesAreServedInTheOrderTheyCame() {
        Admission admission = admission(QueueOrder.DEADLINE);
        TestCall running = offer(admission, "caller", 10_000);
        TestCall first = offer(admission, "caller", 400);
        TestCall second = offer(admission, "caller", 400);
        started.clear();
        running.release();
        started.get(0).release();

        assertThat(started).containsExactly(first, second);
    }

    @Test
    void aCallWhoseTurnComesTooLateToFinishIsAnsweredAndTheSeatGoesToTheNext() {
        Admission admission = admission(QueueOrder.DEADLINE);
        TestCall running = offer(admission, "caller", 10_000);
        TestCall urgent = offer(admission, "caller", 50);
        TestCall patient = offer(admission, "caller", 5_000);
        started.clear();

        // 48 of its 50 ms gone: 2 ms left, less than the level's service time (3 ms at first, 8.6 ms
        // once the running call's 48 ms is measured at its release).
        time.forwardMillis(48);
        running.release();

        assertThat(urgent.started).isFalse();
        assertThat(urgent.rejection.reason()).isEqualTo(RejectReason.CANNOT_FINISH);
        assertThat(urgent.rejection.describe()).contains("cannot-finish");
        assertThat(patient.started).as("the seat went to the next call").isTrue();
        assertThat(rejected).containsExactly("cannot-finish");
        assertThat(admission.level("default").inQueue()).isZero();
        time.forwardMillis(10_000);
        assertThat(rejected).as("its queue time-out was cancelled").containsExactly("cannot-finish");
    }

    /**
     * A call of 50 ms waits behind one seat for {@code waitedMillis}; whether it is served when the
     * seat frees. The level's service time is 3 ms, then 3 + (waited - 3) / 8 once the running call's
     * time is measured at its release: 7.6 ms after 40 ms, 8.6 ms after 48.
     */
    @ParameterizedTest(name = "{0}, {1} of 50 ms waited: served {2}")
    @CsvSource({"DEADLINE, 40, true", "DEADLINE, 48, false", "ARRIVAL, 48, true"})
    void whetherALateCallIsServed(QueueOrder order, long waitedMillis, boolean served) {
        Admission admission = admission(order);
        TestCall running = offer(admission, "caller", 10_000);
        TestCall urgent = offer(admission, "caller", 50);
        time.forwardMillis(waitedMillis);
        running.release();

        assertThat(urgent.started).isEqualTo(served);
        assertThat(rejected).hasSize(served ? 0 : 1);
    }

    /**
     * A hop whose calls spend 190 of their 200 ms waiting on their downstream calls; a call whose
     * allowance (300 ms) set {@code setAsideMillis} aside for its own downstream calls queues behind
     * one, and has 40 ms left when the seat frees. The work it needs is its own 10 ms and whatever of
     * the 190 ms downstream the set-aside does not cover: the downstream time is not counted twice,
     * neither when it queues (a predicted wait of 200 ms) nor when its turn comes.
     */
    @ParameterizedTest(name = "{0} ms set aside for downstream: served {1}, else {2}")
    @CsvSource({"300, true, ''", "190, true, ''", "120, false, cannot-finish", "0, false, deadline-infeasible"})
    void aCallsDownstreamTimeCountsAgainstWhatItsAllowanceSetAsideForIt(
            long setAsideMillis, boolean served, String rejection) {
        Admission admission = admission(QueueOrder.DEADLINE);
        for (int i = 0; i < 60; i++) {
            TestCall call = offer(admission, "caller", 10_000);
            time.forwardMillis(200);
            call.releaseAfterWaitingDownstream(190);
        }
        TestCall running = offer(admission, "caller", 10_000);
        TestCall queued = new TestCall(admission.level("default"), "caller", 300, started);
        queued.downstreamSetAsideNanos = setAsideMillis * 1_000_000L;
        queued.offer();
        time.forwardMillis(260);
        running.releaseAfterWaitingDownstream(250);

        assertThat(queued.started).isEqualTo(served);
        assertThat(rejected).isEqualTo(served ? List.of() : List.of(rejection));
    }

    /**
     * The process's own warm-up calls run on a JIT-cold server: sixty of 200 ms each leave the level's
     * service time at its 3 ms, so that a caller's 50 ms call that waited 40 ms is still served (the
     * row of {@link #whetherALateCallIsServed} without them). Counted, they would make it 200 ms.
     */
    @Test
    void warmUpCallsAreNoMeasureOfTheLevelsServiceTime() {
        Admission admission = admission(QueueOrder.DEADLINE);
        for (int i = 0; i < 60; i++) {
            TestCall call = new TestCall(admission.level("default"), "self", 10_000, started);
            call.warmUp = true;
            call.offer();
            time.forwardMillis(200);
            call.release();
        }
        TestCall running = offer(admission, "caller", 10_000);
        TestCall urgent = offer(admission, "caller", 50);
        time.forwardMillis(40);
        running.release();

        assertThat(urgent.rejection).isNull();
        assertThat(urgent.started).isTrue();
        assertThat(rejected).isEmpty();
    }

    @Test
    void anUrgentCallIsNotRefusedForAWaitItWillNotHave() {
        Admission admission = admission(QueueOrder.DEADLINE);
        offer(admission, "caller", 10_000);
        for (int i = 0; i < 20; i++) {
            offer(admission, "caller", 10_000);
        }
        // Twenty calls ahead in arrival order (60 ms predicted), none ahead by deadline: 3 ms + 3 ms.
        TestCall urgent = offer(admission, "caller", 20);
        assertThat(urgent.rejection).isNull();

        Admission arrival = admission(QueueOrder.ARRIVAL);
        offer(arrival, "caller", 10_000);
        for (int i = 0; i < 20; i++) {
            offer(arrival, "caller", 10_000);
        }
        TestCall behind = offer(arrival, "caller", 20);
        assertThat(behind.rejection.reason()).isEqualTo(RejectReason.DEADLINE_INFEASIBLE);
    }

    @Test
    void deadlineOrderKeepsTheQueuesFair() {
        Admission admission = admission(QueueOrder.DEADLINE);
        TestCall running = offer(admission, "heavy", 10_000);
        // The heavy flow's calls are all more urgent than the light one's: fairness between queues
        // still serves the light flow in turn.
        for (int i = 0; i < 10; i++) {
            offer(admission, "heavy", 1_000);
        }
        offer(admission, "light", 9_000);
        started.clear();
        for (int i = 0; i < 3; i++) {
            time.forwardMillis(2);
            running.release();
            running = started.get(started.size() - 1);
        }
        assertThat(started).extracting(TestCall::flow).contains("light");
    }
}
