package dev.grpcops.admission;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** The fairness arithmetic inside one level, on a fake clock. */
class FairQueuingTests {

    /** Not registered as an extension: calls still queued at a test's end keep their time-outs pending. */
    private final dev.grpcops.testing.FakeClock time = new dev.grpcops.testing.FakeClock();

    private final List<TestCall> started = new ArrayList<>();

    private Admission admission(int limit, PriorityLevelConfig... levels) {
        return Admission.builder(AdmissionConfig.builder()
                        .limit(limit)
                        .levels(List.of(levels))
                        .maxWait(Duration.ofSeconds(10))
                        .retryPushback(Duration.ofSeconds(1), Duration.ofSeconds(32))
                        .build())
                .listener(AdmissionListener.NONE)
                .nanoClock(time::nanoTime)
                .timer(time.timer())
                .build();
    }

    private TestCall offer(Admission admission, String level, String flow) {
        TestCall call = new TestCall(admission.level(level), flow, 5_000, started);
        return call.offer();
    }

    private void offer(Admission admission, String flow, int count) {
        for (int i = 0; i < count; i++) {
            offer(admission, "default", flow);
        }
    }

    /** Runs {@code calls} calls one after another on the single seat, each for {@code millis}; returns the one running then. */
    private TestCall serve(TestCall running, int calls, long millis) {
        TestCall current = running;
        for (int i = 0; i < calls; i++) {
            time.forwardMillis(millis);
            current.release();
            current = started.get(started.size() - 1);
        }
        return current;
    }

    @Test
    void aLightFlowIsServedBetweenTheCallsOfAHeavyOne() {
        Admission admission = admission(1, PriorityLevelConfig.of("default", 1));
        TestCall first = offer(admission, "default", "heavy");
        offer(admission, "heavy", 40);
        offer(admission, "light", 5);
        started.clear();
        serve(first, 10, 2);

        // Alternating: the light flow's five calls go in the first ten seats, not after the heavy flow's forty.
        assertThat(started.subList(0, 10))
                .extracting(TestCall::flow)
                .filteredOn("light"::equals)
                .hasSize(5);
    }

    @Test
    void aFlowStaysOnItsQueueSoItsExcessIsRejectedNotSpreadOverItsHand() {
        Admission admission = admission(
                1, PriorityLevelConfig.builder("default").queueLengthLimit(10).build());
        offer(admission, "default", "seat-holder");
        List<TestCall> flood = new ArrayList<>();
        for (int i = 0; i < 30; i++) {
            flood.add(offer(admission, "default", "noisy"));
        }

        // One queue of 10, not the hand's eight queues of 10 each.
        assertThat(flood).filteredOn(call -> call.rejection == null).hasSize(10);
        assertThat(flood)
                .filteredOn(call -> call.rejection != null)
                .allSatisfy(call -> assertThat(call.rejection.reason()).isEqualTo(RejectReason.QUEUE_FULL));
        TestCall polite = offer(admission, "default", "polite");
        assertThat(polite.rejection).isNull();
    }

    @Test
    void eightNoisyFlowsCannotShutOutAQuietOne() {
        Admission admission = admission(4, PriorityLevelConfig.of("default", 1));
        List<TestCall> running = new ArrayList<>();
        for (int i = 0; i < 4; i++) {
            running.add(offer(admission, "default", "noisy-" + i));
        }
        for (int round = 0; round < 50; round++) {
            for (int n = 0; n < 8; n++) {
                offer(admission, "default", "noisy-" + n);
            }
        }
        TestCall quiet = offer(admission, "default", "quiet");
        assertThat(quiet.rejection).as("the quiet flow finds room in its hand").isNull();
        started.clear();
        // Nine flows with calls waiting: the quiet one is among the first nine dispatched.
        for (int i = 0; i < 9 && !quiet.started; i++) {
            time.forwardMillis(1);
            TestCall done = running.remove(0);
            done.release();
            running.add(started.get(started.size() - 1));
        }
        assertThat(quiet.started).isTrue();
    }

    @Test
    void aFlowWhoseCallsRunLongerGetsFewerSeatsInTheSameTime() {
        // Virtual finish time from measured service time: 10 ms calls and 1 ms calls share one seat
        // by time, not by count.
        Admission admission = admission(1, PriorityLevelConfig.of("default", 1));
        Map<String, Long> serviceMillis = Map.of("slow", 10L, "fast", 1L);
        Map<String, Long> busyMillis = new HashMap<>();
        Map<String, Long> offered = new HashMap<>();
        TestCall running = offer(admission, "default", "slow");
        offered.put("slow", 1L);
        long end = time.nanoTime() + 2_000_000_000L;
        while (time.nanoTime() < end) {
            // Both flows keep a backlog of five.
            for (String flow : serviceMillis.keySet()) {
                long waiting = offered.getOrDefault(flow, 0L)
                        - started.stream().filter(c -> c.flow().equals(flow)).count();
                for (long i = waiting; i < 5; i++) {
                    offer(admission, "default", flow);
                    offered.merge(flow, 1L, Long::sum);
                }
            }
            long service = serviceMillis.get(running.flow());
            time.forwardMillis(service);
            busyMillis.merge(running.flow(), service, Long::sum);
            running.release();
            running = started.get(started.size() - 1);
        }

        double slowShare = (double) busyMillis.get("slow") / (busyMillis.get("slow") + busyMillis.get("fast"));
        assertThat(slowShare).as("share of the seat's time the slow flow got").isBetween(0.35, 0.65);
    }

    @Test
    void anIdleQueueComingBackGetsNoCreditForItsIdleTime() {
        Admission admission = admission(1, PriorityLevelConfig.of("default", 1));
        TestCall running = offer(admission, "default", "steady");
        offer(admission, "steady", 20);
        running = serve(running, 10, 3);
        // A flow that was idle while "steady" ran ten calls arrives with five.
        offer(admission, "late", 5);
        started.clear();
        serve(running, 6, 3);
        // It alternates with "steady" instead of taking the next five seats in a row.
        assertThat(started)
                .extracting(TestCall::flow)
                .filteredOn("steady"::equals)
                .hasSizeGreaterThanOrEqualTo(2);
    }
}
