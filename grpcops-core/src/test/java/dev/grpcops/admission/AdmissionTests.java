package dev.grpcops.admission;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/** Seats, levels, deadlines, cancellation and drain, on a fake clock. */
class AdmissionTests {

    /** Not registered as an extension: calls still queued at a test's end keep their time-outs pending. */
    private final dev.grpcops.testing.FakeClock time = new dev.grpcops.testing.FakeClock();

    private final List<TestCall> started = new ArrayList<>();
    private final List<String> rejectedLabels = new ArrayList<>();
    private final AdmissionListener listener = new AdmissionListener() {
        @Override
        public void rejected(String level, RejectReason reason) {
            rejectedLabels.add(level + "/" + reason.label());
        }
    };

    private Admission admission(int limit, Duration maxWait, PriorityLevelConfig... levels) {
        return Admission.builder(AdmissionConfig.builder()
                        .limit(limit)
                        .levels(List.of(levels))
                        .maxWait(maxWait)
                        .retryPushback(Duration.ofSeconds(1), Duration.ofSeconds(32))
                        .build())
                .listener(listener)
                .nanoClock(time::nanoTime)
                .timer(time.timer())
                .build();
    }

    private Admission threeLevels(int limit) {
        return admission(
                limit,
                Duration.ofSeconds(5),
                PriorityLevelConfig.of("critical", 50),
                PriorityLevelConfig.of("default", 35),
                PriorityLevelConfig.of("sheddable", 15));
    }

    private TestCall offer(Admission admission, String level, String flow, long allowanceMillis) {
        TestCall call = new TestCall(admission.level(level), flow, allowanceMillis, started);
        return call.offer();
    }

    /** 32 seats at most, an adaptive limit of 8 to 64 within them, on the fake clock. */
    private Admission adaptive() {
        return Admission.builder(AdmissionConfig.builder()
                        .limit(32)
                        .levels(PriorityLevelConfig.of("default", 1))
                        .adaptiveLimit(
                                AdaptiveLimit.builder().minLimit(8).maxLimit(64).build())
                        .build())
                .nanoClock(time::nanoTime)
                .timer(time.timer())
                .build();
    }

    private TestCall offerWide(Admission admission, String flow, int seats) {
        return new TestCall(admission.level("default"), flow, 5_000, started)
                .wide(seats)
                .offer();
    }

    /**
     * With an adaptive limit a call may be wider than the limit is at the moment (here the first
     * probe's minimum, 8 seats): it takes every seat there is, and is not left waiting for seats
     * that will never be free.
     */
    @Test
    void aCallWiderThanTheAdaptiveLimitNowTakesEverySeatThereIs() {
        Admission admission = adaptive();
        assertThat(admission.limit()).as("the first probe").isEqualTo(8);

        TestCall wide = offerWide(admission, "fan-out", 20);

        assertThat(wide.started).isTrue();
        assertThat(admission.level("default").executingSeats()).isEqualTo(8);
        wide.release();
        assertThat(admission.level("default").executingSeats()).isZero();
    }

    /**
     * The process's own warm-up calls ({@link AdmissionRequest#warmUp}) run on a JIT-cold server:
     * none is a sample, so the first probe keeps the minimum seats until callers' calls end it.
     */
    @ParameterizedTest(name = "warm-up calls: {0}")
    @ValueSource(booleans = {true, false})
    void warmUpCallsAreNoSamplesOfTheAdaptiveLimit(boolean warmUp) {
        Admission admission = adaptive();
        for (int i = 0; i < 40; i++) {
            TestCall call = new TestCall(admission.level("default"), "self", 5_000, started);
            call.warmUp = warmUp;
            call.offer();
            time.forwardMillis(10);
            call.release();
        }

        if (warmUp) {
            assertThat(admission.limit())
                    .as("still probing with the minimum seats")
                    .isEqualTo(8);
        } else {
            assertThat(admission.limit()).as("the probe ended").isGreaterThan(8);
        }
    }

    /** A call that fans out takes a seat per downstream call: a wide one waits until that many are free. */
    @Test
    void aWideCallTakesItsWidthInSeats() {
        Admission admission = admission(10, Duration.ofSeconds(5), PriorityLevelConfig.of("default", 1));
        TestCall wide = offerWide(admission, "fan-out", 8);
        assertThat(wide.started).isTrue();
        assertThat(admission.level("default").executingSeats()).isEqualTo(8);
        TestCall narrow = offerWide(admission, "polite", 1);
        assertThat(narrow.started).as("9 of 10 seats").isTrue();
        TestCall second = offerWide(admission, "fan-out", 8);
        assertThat(second.started).as("8 seats are not free").isFalse();
        assertThat(admission.level("default").inQueue()).isEqualTo(1);

        wide.release();
        assertThat(second.started).as("once they are").isTrue();
        assertThat(admission.level("default").executingSeats()).isEqualTo(9);
        TestCall tooWide = offerWide(admission, "fan-out", 500);
        tooWide.release(); // not started: nothing happens
        second.release();
        narrow.release();
        assertThat(tooWide.started)
                .as("wider than the server: its limit, not for ever")
                .isTrue();
        assertThat(admission.level("default").executingSeats()).isEqualTo(10);
    }

    /**
     * Fair queuing charges a flow for every seat of its calls: a flow fanning out eight calls at a
     * time gets its turn an eighth as often as a flow of single calls, instead of eight times its share.
     */
    @Test
    void aFlowIsChargedForEverySeatItsCallsTake() {
        Admission admission = admission(8, Duration.ofSeconds(5), PriorityLevelConfig.of("default", 1));
        TestCall blocker = offerWide(admission, "blocker", 8);
        List<TestCall> wide = new ArrayList<>();
        List<TestCall> narrow = new ArrayList<>();
        for (int i = 0; i < 4; i++) {
            wide.add(offerWide(admission, "fan-out", 8));
        }
        for (int i = 0; i < 16; i++) {
            narrow.add(offerWide(admission, "polite", 1));
        }
        started.clear();
        blocker.release();
        // Every call runs for the level's estimate, then frees its seats: whoever fair order picks next starts.
        for (int i = 0; i < 40 && !started.isEmpty(); i++) {
            List<TestCall> running = new ArrayList<>(started);
            started.clear();
            time.forwardMillis(3);
            running.forEach(TestCall::release);
            order.addAll(running);
        }
        long narrowBeforeSecondWide = order.subList(0, order.indexOf(wide.get(1))).stream()
                .filter(narrow::contains)
                .count();
        assertThat(narrowBeforeSecondWide)
                .as("single calls served before the fan-out flow's second call: %s", order)
                .isGreaterThanOrEqualTo(8);
    }

    private final List<TestCall> order = new ArrayList<>();

    @Test
    void seatsAreSplitByNominalShares() {
        Admission admission = threeLevels(100);
        assertThat(admission.levels()).extracting(Admission.Level::nominalSeats).containsExactly(50, 35, 15);
    }

    @Test
    void aLevelBorrowsIdleSeatsAndAnOwedLevelGetsTheNextFreeOnes() {
        Admission admission = threeLevels(10);
        List<TestCall> sheddable = new ArrayList<>();
        for (int i = 0; i < 20; i++) {
            sheddable.add(offer(admission, "sheddable", "batch", 5_000));
        }
        assertThat(admission.level("sheddable").executingSeats())
                .as("borrowed every idle seat")
                .isEqualTo(10);

        TestCall critical1 = offer(admission, "critical", "checkout", 5_000);
        TestCall critical2 = offer(admission, "critical", "checkout", 5_000);
        assertThat(critical1.started).isFalse();
        sheddable.get(0).release();
        sheddable.get(1).release();

        // The freed seats go to the critical level, owed its nominal five, ahead of ten waiting sheddable calls.
        assertThat(critical1.started).isTrue();
        assertThat(critical2.started).isTrue();
        assertThat(admission.level("sheddable").inQueue()).isEqualTo(10);
    }

    @Test
    void seatsOwedToALevelWithoutQueuesAreNotBorrowedBecauseItCouldNotWaitForThem() {
        Admission admission = admission(
                10,
                Duration.ofSeconds(5),
                PriorityLevelConfig.builder("critical").shares(50).queues(0).build(),
                PriorityLevelConfig.of("sheddable", 50));
        for (int i = 0; i < 20; i++) {
            offer(admission, "sheddable", "batch", 5_000);
        }
        assertThat(admission.level("sheddable").executingSeats())
                .as("its own five, none of critical's")
                .isEqualTo(5);

        for (int i = 0; i < 5; i++) {
            assertThat(offer(admission, "critical", "checkout", 5_000).started).isTrue();
        }
        assertThat(offer(admission, "critical", "checkout", 5_000).rejection.reason())
                .isEqualTo(RejectReason.CONCURRENCY_LIMIT);
    }

    /** In arrival order a call waits behind its flow's backlog (in deadline order: DeadlineOrderTests). */
    @Test
    void aCallThatCouldNotFinishAfterItsPredictedWaitIsRejectedAtOnce() {
        Admission admission = Admission.builder(AdmissionConfig.builder()
                        .limit(1)
                        .levels(List.of(PriorityLevelConfig.of("default", 1)))
                        .maxWait(Duration.ofSeconds(5))
                        .retryPushback(Duration.ofSeconds(1), Duration.ofSeconds(32))
                        .queueOrder(QueueOrder.ARRIVAL)
                        .build())
                .listener(listener)
                .nanoClock(time::nanoTime)
                .timer(time.timer())
                .build();
        offer(admission, "default", "holder", 5_000);
        for (int i = 0; i < 30; i++) {
            offer(admission, "default", "backlog", 5_000);
        }
        // 31 calls of ~3 ms ahead (the initial estimate): ~93 ms; 50 ms cannot wait that long.
        TestCall hurried = offer(admission, "default", "backlog", 50);
        TestCall patient = offer(admission, "default", "other", 50);

        assertThat(hurried.rejection.reason()).isEqualTo(RejectReason.DEADLINE_INFEASIBLE);
        assertThat(patient.rejection)
                .as("another flow is served in the next rounds")
                .isNull();
        assertThat(rejectedLabels).containsExactly("default/deadline-infeasible");
    }

    @Test
    void aQueuedCallIsRejectedWhenItsWaitOutlivesItsAllowanceOrMaxWait() {
        Admission admission = admission(1, Duration.ofMillis(300), PriorityLevelConfig.of("default", 1));
        offer(admission, "default", "holder", 5_000);
        TestCall shortBudget = offer(admission, "default", "a", 100);
        TestCall noDeadline = offer(admission, "default", "b", 60_000);

        time.forwardMillis(99);
        assertThat(shortBudget.rejection).isNull();
        time.forwardMillis(1);
        assertThat(shortBudget.rejection.reason()).isEqualTo(RejectReason.TIME_OUT);
        time.forwardMillis(199);
        assertThat(noDeadline.rejection).isNull();
        time.forwardMillis(1);
        assertThat(noDeadline.rejection.reason()).isEqualTo(RejectReason.TIME_OUT);
        assertThat(admission.level("default").inQueue()).isZero();
    }

    @Test
    void aCallCancelledWhileQueuedLeavesAtOnceAndItsPlaceIsFree() {
        Admission admission = admission(
                1,
                Duration.ofSeconds(5),
                PriorityLevelConfig.builder("default")
                        .queues(1)
                        .handSize(1)
                        .queueLengthLimit(1)
                        .build());
        TestCall holder = offer(admission, "default", "holder", 5_000);
        TestCall queued = offer(admission, "default", "a", 5_000);
        TestCall full = offer(admission, "default", "b", 5_000);
        assertThat(full.rejection.reason()).isEqualTo(RejectReason.QUEUE_FULL);

        assertThat(queued.cancel()).isTrue();
        assertThat(time.pendingTasks()).as("its timeout is cancelled too").isZero();
        TestCall next = offer(admission, "default", "b", 5_000);
        assertThat(next.rejection).isNull();
        holder.release();
        assertThat(queued.started).isFalse();
        assertThat(next.started).isTrue();
        assertThat(rejectedLabels).containsExactly("default/queue-full", "default/cancelled");
        assertThat(holder.cancel())
                .as("a started call is not cancelled by admission")
                .isFalse();
    }

    @Test
    void aLevelWithoutQueuesRejectsWhenNoSeatIsFree() {
        Admission admission = admission(
                1,
                Duration.ofSeconds(5),
                PriorityLevelConfig.builder("catch-all").queues(0).build());
        offer(admission, "catch-all", "a", 5_000);
        TestCall second = offer(admission, "catch-all", "b", 5_000);
        assertThat(second.rejection.reason()).isEqualTo(RejectReason.CONCURRENCY_LIMIT);
    }

    @Test
    void aSeatIsReleasedOnceHoweverOftenReleaseIsCalled() {
        Admission admission = admission(2, Duration.ofSeconds(5), PriorityLevelConfig.of("default", 1));
        TestCall a = offer(admission, "default", "a", 5_000);
        offer(admission, "default", "b", 5_000);
        a.release();
        a.release();
        assertThat(admission.level("default").executingSeats()).isEqualTo(1);
    }

    @Test
    void pushbackDoublesWhileRejectionsGoOnAndShrinksWhenTheyStop() {
        Admission admission = admission(
                1,
                Duration.ofSeconds(5),
                PriorityLevelConfig.builder("default").queues(0).build());
        offer(admission, "default", "holder", 5_000);
        List<Long> pushbacks = new ArrayList<>();
        for (int second = 0; second < 7; second++) {
            pushbacks.add(offer(admission, "default", "flood", 5_000)
                    .rejection
                    .retryAfter()
                    .toSeconds());
            time.forwardMillis(1_000);
        }
        assertThat(pushbacks).containsExactly(1L, 2L, 4L, 8L, 16L, 32L, 32L);

        time.forwardMillis(3_000);
        assertThat(offer(admission, "default", "flood", 5_000)
                        .rejection
                        .retryAfter()
                        .toSeconds())
                .isEqualTo(29);
        time.forwardMillis(120_000);
        assertThat(offer(admission, "default", "flood", 5_000)
                        .rejection
                        .retryAfter()
                        .toSeconds())
                .isEqualTo(1);
    }

    @Test
    void drainingEndsQueuedCallsAndThoseThatWouldQueueButStillRunCallsThatFindASeat() {
        Admission admission = admission(2, Duration.ofSeconds(5), PriorityLevelConfig.of("default", 1));
        TestCall running = offer(admission, "default", "a", 5_000);
        offer(admission, "default", "a", 5_000);
        TestCall queued = offer(admission, "default", "b", 5_000);

        admission.drain();

        assertThat(queued.rejection.reason()).isEqualTo(RejectReason.DRAINING);
        assertThat(offer(admission, "default", "c", 5_000).rejection.reason()).isEqualTo(RejectReason.DRAINING);
        running.release();
        assertThat(offer(admission, "default", "d", 5_000).started).isTrue();
        assertThat(time.pendingTasks()).isZero();
    }

    @Test
    void aCallThatEndsWhileStartingDoesNotRecurseIntoTheNext() {
        Admission admission = admission(
                1,
                Duration.ofSeconds(5),
                PriorityLevelConfig.builder("default").queueLengthLimit(10_000).build());
        List<TestCall> order = new ArrayList<>();
        class FailingFast extends TestCall {
            FailingFast(String flow) {
                super(admission.level("default"), flow, 600_000, order);
            }

            @Override
            public void start(Ticket ticket) {
                super.start(ticket);
                release(); // ends at once, like a handler that fails on its first line
            }
        }
        TestCall holder = offer(admission, "default", "holder", 60_000);
        for (int i = 0; i < 20_000; i++) {
            new FailingFast("flow-" + (i % 50)).offer();
        }
        holder.release();
        assertThat(order).hasSize(20_000);
    }

    @Test
    void anUnknownLevelIsNamedInTheError() {
        Admission admission = threeLevels(10);
        assertThatThrownBy(() -> admission.level("gold"))
                .hasMessageContaining("gold")
                .hasMessageContaining("critical");
    }

    /** A metrics listener that throws must cost no call its seat, and no queued call its start. */
    @Test
    void aListenerThatThrowsLosesNoSeatAndStartsEveryCall() {
        AdmissionListener throwing = new AdmissionListener() {
            @Override
            public void dispatched(String level, long waitNanos) {
                throw new IllegalStateException("broken metrics");
            }

            @Override
            public void rejected(String level, RejectReason reason) {
                throw new IllegalStateException("broken metrics");
            }
        };
        Admission admission = Admission.builder(AdmissionConfig.builder()
                        .limit(1)
                        .levels(List.of(PriorityLevelConfig.of("default", 1)))
                        .maxWait(Duration.ofSeconds(5))
                        .retryPushback(Duration.ofSeconds(1), Duration.ofSeconds(32))
                        .build())
                .listener(throwing)
                .nanoClock(time::nanoTime)
                .timer(time.timer())
                .build();

        TestCall first = offer(admission, "default", "a", 5_000);
        TestCall queued = offer(admission, "default", "b", 5_000);
        assertThat(first.started).as("started though the listener threw").isTrue();
        first.release();
        assertThat(queued.started)
                .as("the queued call was started by the release")
                .isTrue();
        queued.release();
        assertThat(admission.level("default").executingSeats()).isZero();
        assertThat(offer(admission, "default", "c", 5_000).started).isTrue();
    }
}
