package dev.grpcops.admission;

import static org.assertj.core.api.Assertions.assertThat;

import dev.grpcops.testing.FakeClock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Combinators;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import net.jqwik.api.constraints.IntRange;

/**
 * Admission's rules over generated sequences of offers (of any width, level and allowance),
 * releases, cancellations, drains and the passing of time, on a fake clock: after every step the
 * seats add up, stay within the limit, and no waiting call fits in the seats free to its level
 * (work conserving); in the end every seat is back and every call ended exactly one way. jqwik
 * prints the seed and the shrunk sequence of a failure.
 */
class AdmissionPropertyTests {

    enum Kind {
        OFFER,
        RELEASE,
        CANCEL,
        ADVANCE,
        DRAIN
    }

    /** One step: {@code a}, {@code b}, {@code c} read per kind (level, width, allowance; which call; how long). */
    record Step(Kind kind, int a, int b, int c) {}

    @Provide
    Arbitrary<List<Step>> steps() {
        Arbitrary<Kind> kinds = Arbitraries.frequencyOf(
                net.jqwik.api.Tuple.of(40, Arbitraries.just(Kind.OFFER)),
                net.jqwik.api.Tuple.of(25, Arbitraries.just(Kind.RELEASE)),
                net.jqwik.api.Tuple.of(10, Arbitraries.just(Kind.CANCEL)),
                net.jqwik.api.Tuple.of(20, Arbitraries.just(Kind.ADVANCE)),
                net.jqwik.api.Tuple.of(1, Arbitraries.just(Kind.DRAIN)));
        Arbitrary<Step> step = Combinators.combine(
                        kinds,
                        Arbitraries.integers().between(0, 99),
                        Arbitraries.integers().between(1, 12),
                        Arbitraries.integers().between(0, 2_000))
                .as(Step::new);
        return step.list().ofMinSize(1).ofMaxSize(300);
    }

    @Property(tries = 300)
    void seatsAddUpNoWaitingCallFitsAndEveryCallEndsOnce(
            @ForAll("steps") List<Step> steps, @ForAll @IntRange(min = 3, max = 12) int limit) {
        FakeClock clock = new FakeClock();
        Admission admission = Admission.builder(AdmissionConfig.builder()
                        .limit(limit)
                        .levels(List.of(
                                PriorityLevelConfig.builder("critical")
                                        .shares(50)
                                        .queues(8)
                                        .handSize(2)
                                        .queueLengthLimit(5)
                                        .build(),
                                PriorityLevelConfig.builder("default")
                                        .shares(35)
                                        .queues(8)
                                        .handSize(2)
                                        .queueLengthLimit(5)
                                        .build(),
                                PriorityLevelConfig.builder("exempt-like")
                                        .shares(15)
                                        .queues(0)
                                        .build()))
                        .maxWait(Duration.ofMillis(500))
                        .build())
                .nanoClock(clock.nanoClock())
                .timer(clock.timer())
                .build();
        List<Admission.Level> levels = admission.levels();
        List<TestCall> calls = new ArrayList<>();
        List<TestCall> startOrder = new ArrayList<>();
        for (Step step : steps) {
            switch (step.kind()) {
                case OFFER ->
                    calls.add(new TestCall(
                                    levels.get(step.a() % levels.size()), "flow-" + step.a() % 5, step.c(), startOrder)
                            .wide(step.b())
                            .offer());
                case RELEASE -> {
                    List<TestCall> running = running(calls);
                    if (!running.isEmpty()) {
                        running.get(step.a() % running.size()).release();
                    }
                }
                case CANCEL -> {
                    if (!calls.isEmpty()) {
                        calls.get(step.a() % calls.size()).cancel();
                    }
                }
                case ADVANCE -> clock.forwardMillis(step.c() / 4);
                case DRAIN -> admission.drain();
            }
            assertThat(admission.invariantViolation()).as("after %s", step).isNull();
        }
        // The end: every running call ends (each end may seat waiting ones), the waits run out.
        for (int round = 0; round < 10_000 && !running(calls).isEmpty(); round++) {
            running(calls).get(0).release();
            assertThat(admission.invariantViolation()).isNull();
        }
        clock.forward(Duration.ofSeconds(10));
        while (!running(calls).isEmpty()) {
            running(calls).get(0).release();
        }
        for (Admission.Level level : levels) {
            assertThat(level.executingSeats()).as(level.name() + " seats").isZero();
            assertThat(level.inQueue()).as(level.name() + " waiting").isZero();
        }
        for (TestCall call : calls) {
            assertThat(call.started && call.rejection != null)
                    .as("%s both started and rejected", call)
                    .isFalse();
        }
        clock.assertNoLeftoverTasks();
    }

    /** Calls started and not released yet. */
    private static List<TestCall> running(List<TestCall> calls) {
        List<TestCall> running = new ArrayList<>();
        for (TestCall call : calls) {
            if (call.started && !call.released) {
                running.add(call);
            }
        }
        return running;
    }
}
