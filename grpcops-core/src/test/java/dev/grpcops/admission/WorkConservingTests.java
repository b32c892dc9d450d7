package dev.grpcops.admission;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * A queue's head never blocks another priority level, nor a narrower call that fits; no seat stays
 * free while a queued call fits; a call that leaves its queue unserved is charged like one served.
 * On a fake clock.
 */
class WorkConservingTests {

    /** Not registered as an extension: calls still queued at a test's end keep their time-outs pending. */
    private final dev.grpcops.testing.FakeClock time = new dev.grpcops.testing.FakeClock();

    private final List<TestCall> started = new ArrayList<>();

    private Admission admission(int limit, PriorityLevelConfig... levels) {
        return Admission.builder(AdmissionConfig.builder()
                        .limit(limit)
                        .levels(List.of(levels))
                        .maxWait(Duration.ofSeconds(10))
                        .build())
                .nanoClock(time::nanoTime)
                .timer(time.timer())
                .build();
    }

    private TestCall offer(Admission admission, String level, String flow, int width) {
        return new TestCall(admission.level(level), flow, 5_000, started)
                .wide(width)
                .offer();
    }

    private static int free(Admission admission) {
        return admission.limit()
                - admission.levels().stream()
                        .mapToInt(Admission.Level::executingSeats)
                        .sum();
    }

    @Test
    void aWideCallWaitingForSeatsHoldsBackNoNarrowerCallOfItsLevel() {
        Admission admission = admission(10, PriorityLevelConfig.of("default", 1));
        TestCall running = offer(admission, "default", "busy", 8);
        TestCall wide = offer(admission, "default", "fan-out", 8);
        TestCall narrow = offer(admission, "default", "polite", 1);
        assertThat(narrow.started)
                .as("9 of 10 seats: it fits beside the running call")
                .isTrue();
        TestCall queuedNarrow = offer(admission, "default", "polite-2", 2);
        assertThat(queuedNarrow.started).as("1 seat free, it needs 2").isFalse();

        narrow.release();
        assertThat(wide.started).as("8 seats are not free").isFalse();
        assertThat(queuedNarrow.started)
                .as("2 seats free: the narrower call behind the wide one takes them")
                .isTrue();
        assertThat(free(admission)).isZero();

        running.release();
        queuedNarrow.release();
        assertThat(wide.started).as("its seats free at last").isTrue();
        wide.release();
    }

    @Test
    void aWideCallAtTheHeadOfOneLevelHoldsBackNoOtherLevel() {
        Admission admission =
                admission(10, PriorityLevelConfig.of("default", 1), PriorityLevelConfig.of("sheddable", 1));
        List<TestCall> running = new ArrayList<>();
        for (int i = 0; i < 10; i++) {
            running.add(offer(admission, i < 5 ? "default" : "sheddable", "busy-" + i, 1));
        }
        TestCall wide = offer(admission, "default", "fan-out", 6);
        TestCall other = offer(admission, "sheddable", "polite", 1);
        assertThat(wide.started || other.started).isFalse();

        running.get(0).release(); // a default seat frees: default is owed it, but its call needs 6
        assertThat(other.started)
                .as("the other level's call fits the seat free")
                .isTrue();
        assertThat(wide.started).isFalse();
        running.forEach(TestCall::release);
        assertThat(wide.started).isTrue();
    }

    @Test
    void noSeatStaysFreeWhileAQueuedCallFits() {
        Admission admission = admission(4, PriorityLevelConfig.of("default", 1));
        TestCall running = offer(admission, "default", "busy", 4);
        TestCall wide = offer(admission, "default", "fan-out", 4);
        List<TestCall> narrow = new ArrayList<>();
        for (int i = 0; i < 3; i++) {
            narrow.add(offer(admission, "default", "polite-" + i, 1));
        }
        running.release();
        // Fair order may seat the wide call first or the narrow ones; whichever, what still waits does not fit.
        assertThat(started).isNotEmpty();
        List<TestCall> all = new ArrayList<>(narrow);
        all.add(wide);
        for (TestCall call : all) {
            if (!call.started) {
                assertThat(call.width)
                        .as("%s waits with %s seats free", call, free(admission))
                        .isGreaterThan(free(admission));
            }
        }
        wide.cancel();
        narrow.forEach(call -> {
            if (!call.started) {
                call.cancel();
            }
        });
        List.copyOf(started).forEach(TestCall::release);
        assertThat(free(admission)).isEqualTo(4);
    }

    @Test
    void aCallCancelledAtTheHeadLetsTheNextIn() {
        Admission admission = admission(2, PriorityLevelConfig.of("default", 1));
        TestCall running = offer(admission, "default", "busy", 1);
        TestCall wide = offer(admission, "default", "fan-out", 2);
        TestCall narrow = offer(admission, "default", "polite", 1);
        assertThat(narrow.started).as("one seat free: the narrow call fits").isTrue();
        narrow.release();
        assertThat(wide.started).isFalse();
        assertThat(wide.cancel()).isTrue();
        TestCall next = offer(admission, "default", "polite", 1);
        assertThat(next.started).isTrue();
        running.release();
        next.release();
        assertThat(free(admission)).isEqualTo(2);
    }

    /**
     * A flow whose queued calls its callers keep cancelling is charged for them as for calls served:
     * it does not keep its queue first in fair order, ahead of a flow that waits.
     */
    @Test
    void aCallItsCallerCancelsWhileItWaitsIsChargedLikeOneServed() {
        Admission admission = admission(1, PriorityLevelConfig.of("default", 1));
        TestCall running = offer(admission, "default", "busy", 1);
        // Flow "leaver" queues and cancels twenty calls while "steady" waits with five.
        for (int i = 0; i < 5; i++) {
            offer(admission, "default", "steady", 1);
        }
        for (int i = 0; i < 20; i++) {
            offer(admission, "default", "leaver", 1).cancel();
        }
        for (int i = 0; i < 5; i++) {
            offer(admission, "default", "leaver", 1);
        }
        started.clear();
        TestCall current = running;
        for (int i = 0; i < 10; i++) {
            time.forwardMillis(3);
            current.release();
            current = started.get(started.size() - 1);
        }
        assertThat(started.subList(0, 5))
                .as("the flow that waited is served before the one whose calls left: %s", started)
                .extracting(TestCall::flow)
                .containsOnly("steady");
        current.release();
    }

    /**
     * A flow whose queued calls time out, or whose deadlines pass while they wait, was failed by the
     * server: it is not charged for them, and keeps its turns (charged, a polite flow kept waiting
     * under a flood fell further back with every time-out, into more time-outs).
     */
    @Test
    void aFlowWhoseCallsTimeOutIsNotPushedFurtherBack() {
        Admission admission = admission(1, PriorityLevelConfig.of("default", 1));
        TestCall running = offer(admission, "default", "busy", 1);
        for (int i = 0; i < 5; i++) {
            offer(admission, "default", "steady", 1);
        }
        // Twenty of "victim"'s calls time out (a 1 ms allowance) and twenty pass their deadline.
        for (int i = 0; i < 20; i++) {
            new TestCall(admission.level("default"), "victim", 1, started).offer();
        }
        time.forwardMillis(2);
        for (int i = 0; i < 20; i++) {
            offer(admission, "default", "victim", 1).ticket.deadlinePassed();
        }
        for (int i = 0; i < 5; i++) {
            offer(admission, "default", "victim", 1);
        }
        started.clear();
        TestCall current = running;
        for (int i = 0; i < 10; i++) {
            time.forwardMillis(3);
            current.release();
            current = started.get(started.size() - 1);
        }
        assertThat(started.subList(0, 4))
                .as("the two flows take turns: %s", started)
                .extracting(TestCall::flow)
                .contains("steady", "victim");
        current.release();
    }
}
