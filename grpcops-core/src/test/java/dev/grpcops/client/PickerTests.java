package dev.grpcops.client;

import static org.assertj.core.api.Assertions.assertThat;

import io.grpc.ClientStreamTracer;
import io.grpc.LoadBalancer.PickResult;
import io.grpc.LoadBalancer.SubchannelPicker;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.stream.IntStream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * The picker's rules over replicas whose costs the test sets (no channel, no connection): which
 * one a pick takes, how often, and what the listener is told. Draws come from a seeded generator,
 * time from a clock the test holds still.
 */
class PickerTests {

    private static final long MS = TimeUnit.MILLISECONDS.toNanos(1);

    private final AtomicLong now = new AtomicLong(TimeUnit.SECONDS.toNanos(100));
    private final SplittableRandom random = new SplittableRandom(42);
    private final List<String> told = new ArrayList<>();
    private final BalancingListener listener = new BalancingListener() {
        @Override
        public void passedOver(PassedOver reason) {
            told.add("passed over: " + reason);
        }

        @Override
        public void probed() {
            told.add("probed");
        }

        @Override
        public void slowStartBegan() {
            told.add("slow start");
        }
    };

    @ParameterizedTest(name = "loads {0} and {1}: the cheaper one always")
    @CsvSource({"1, 2", "5, 20", "2, 1", "20, 5"})
    void ofTwoTheCheaperOneTakesEveryPick(long firstMs, long secondMs) {
        Picker picker = peakEwma(3, replica("a", firstMs), replica("b", secondMs));
        int cheaper = firstMs < secondMs ? 0 : 1;
        assertThat(picks(picker, 1000, Picker.NO_BUDGET)).containsOnly(cheaper);
        assertThat(told).isEmpty();
    }

    @ParameterizedTest(name = "compared in full up to {0}")
    @CsvSource({"3", "0"})
    void ofTwoOneTwiceAsSlowAndSlowerBy20msGetsOnlyItsProbeOnceASecond(int compareAllUpTo) {
        Picker picker = peakEwma(compareAllUpTo, replica("fast", 5), replica("slow", 50));

        assertThat(counts(picks(picker, 1000, Picker.NO_BUDGET), 2)).containsExactly(999, 1);
        assertThat(told).containsExactly("probed");
        now.addAndGet(TimeUnit.SECONDS.toNanos(1));
        assertThat(counts(picks(picker, 1000, Picker.NO_BUDGET), 2)).containsExactly(999, 1);
        // A call whose deadline its latency would miss is no probe.
        now.addAndGet(TimeUnit.SECONDS.toNanos(1));
        assertThat(picks(picker, 1000, 40 * MS)).containsOnly(0);
    }

    @Test
    void equalLoadsShareThePicksByTheDraws() {
        Picker picker = peakEwma(3, replica("a", 5), replica("b", 5), replica("c", 5));
        int[] counts = counts(picks(picker, 3000, Picker.NO_BUDGET), 3);
        assertThat(IntStream.of(counts).boxed())
                .allSatisfy(count -> assertThat(count).isBetween(850, 1150));
    }

    @Test
    void twoSlowOfThreeComparedInFullLeaveEveryPickButTheProbesToTheFastOne() {
        Candidate fast = replica("fast", 2);
        Candidate slow1 = replica("slow-1", 200);
        Candidate slow2 = replica("slow-2", 200);
        Picker picker = peakEwma(3, fast, slow1, slow2);

        List<Integer> first = picks(picker, 1000, Picker.NO_BUDGET);

        // Each slow one gets its probe (one call, at once), then nothing until a second has passed.
        assertThat(counts(first, 3)).containsExactly(998, 1, 1);
        assertThat(told).filteredOn("probed"::equals).hasSize(2);
        now.addAndGet(TimeUnit.SECONDS.toNanos(1));
        assertThat(counts(picks(picker, 1000, Picker.NO_BUDGET), 3)).containsExactly(998, 1, 1);
    }

    @Test
    void withMoreReplicasThanComparedInFullTheTwoDrawsDecide() {
        Picker picker = peakEwma(2, replica("fast", 2), replica("slow-1", 200), replica("slow-2", 200));
        int[] counts = counts(picks(picker, 3000, Picker.NO_BUDGET), 3);
        // The fast one wins whenever it is drawn (two of three draws), the slow ones share the rest.
        assertThat(counts[0]).isBetween(1850, 2150);
        assertThat(told).isEmpty();
    }

    @Test
    void aReplicaExpectedToAnswerPastTheDeadlineIsPassedOverForOneWithinIt() {
        FakeReplica a = replica("a", 80);
        FakeReplica b = replica("b", 80);
        a.outstanding = 2;
        b.outstanding = 2;
        // By load (cost × (outstanding + 1)) the idle one would win every draw it is in.
        Picker picker = peakEwma(3, a, b, replica("c", 120));
        assertThat(picks(picker, 500, 100 * MS)).doesNotContain(2);
        assertThat(told).contains("passed over: DEADLINE");
        assertThat(picks(picker, 500, Picker.NO_BUDGET)).contains(2);
    }

    @Test
    void whenNoReplicaIsWithinTheDeadlineThePickIsMadeAsWithout() {
        Picker picker = peakEwma(3, replica("a", 300), replica("b", 300), replica("c", 300));
        assertThat(picks(picker, 300, 100 * MS)).contains(0, 1, 2);
        assertThat(told).doesNotContain("passed over: DEADLINE");
    }

    @Test
    void theReplicaToAvoidIsNeverPicked() {
        Picker picker = peakEwma(3, replica("a", 1), replica("b", 5), replica("c", 5));
        List<Integer> picks = new ArrayList<>();
        for (int i = 0; i < 500; i++) {
            picks.add(picker.choose(0, Picker.NO_BUDGET, listener));
        }
        assertThat(picks).doesNotContain(0).contains(1, 2);
    }

    @Test
    void aReplicaInItsSlowStartGetsItsFirstCallAtOnceThenItsWeightedShare() {
        FakeReplica joining = replica("joining", 1);
        joining.slowStartSince = now.get();
        joining.slowStartWindow = TimeUnit.SECONDS.toNanos(30);
        Picker picker = peakEwma(3, replica("a", 5), replica("b", 5), joining);

        assertThat(picker.choose(-1, Picker.NO_BUDGET, listener)).isEqualTo(2);
        joining.outstanding = 1; // its first call has not answered yet: no second probe
        // At 10 % weight of an equal third: about 3 % of the picks, never zero.
        int atStart = counts(picks(picker, 6000, Picker.NO_BUDGET), 3)[2];
        assertThat(atStart).isBetween(140, 260);

        now.addAndGet(TimeUnit.SECONDS.toNanos(15)); // half the window: weight 0.5, a sixth of the picks
        int halfway = counts(picks(picker, 6000, Picker.NO_BUDGET), 3)[2];
        assertThat(halfway).isBetween(850, 1150);
    }

    @Test
    void roundRobinTakesEachInTurn() {
        Picker picker = new Picker(
                List.of(replica("a", 1), replica("b", 100), replica("c", 5)),
                new Picker.Rules(true, 3, now::get, () -> random, new AtomicInteger()));
        assertThat(picks(picker, 6, Picker.NO_BUDGET)).containsExactly(0, 1, 2, 0, 1, 2);
    }

    @Test
    void theSamePicksByTheSameReplicasAreTheSamePicker() {
        FakeReplica a = replica("a", 1);
        FakeReplica b = replica("b", 1);
        Picker.Rules rules = new Picker.Rules(false, 3, now::get, () -> random, new AtomicInteger());
        assertThat(new Picker(List.of(a, b), rules)).isEqualTo(new Picker(List.of(a, b), rules));
        assertThat(new Picker(List.of(a, b), rules)).isNotEqualTo(new Picker(List.of(b, a), rules));
        assertThat(new Picker(List.of(a, b), rules))
                .isNotEqualTo(new Picker(
                        List.of(a, b),
                        new Picker.Rules(false, 2, rules.nanoClock(), rules.random(), rules.nextInTurn())));
    }

    private Picker peakEwma(int compareAllUpTo, Candidate... replicas) {
        return new Picker(
                List.of(replicas),
                new Picker.Rules(false, compareAllUpTo, now::get, () -> random, new AtomicInteger()));
    }

    private List<Integer> picks(Picker picker, int count, long budgetNanos) {
        return IntStream.range(0, count)
                .mapToObj(i -> picker.choose(-1, budgetNanos, listener))
                .toList();
    }

    private static int[] counts(List<Integer> picks, int replicas) {
        int[] counts = new int[replicas];
        picks.forEach(pick -> counts[pick]++);
        return counts;
    }

    private FakeReplica replica(String key, long costMs) {
        return new FakeReplica(key, costMs * MS);
    }

    private interface Candidate extends Picker.Candidate {}

    /**
     * A replica whose latency cost the test sets; calls outstanding as the test says (picks here
     * send nothing); its probe as the balancer's replicas have it (one a second while idle).
     */
    private static final class FakeReplica implements Candidate {

        private final String key;
        private final double cost;
        private final SubchannelPicker picker = new SubchannelPicker() {
            @Override
            public PickResult pickSubchannel(io.grpc.LoadBalancer.PickSubchannelArgs args) {
                return PickResult.withNoResult();
            }
        };
        int outstanding;
        long lastProbe = Long.MIN_VALUE;
        long slowStartSince = Long.MIN_VALUE;
        long slowStartWindow;

        FakeReplica(String key, double cost) {
            this.key = key;
            this.cost = cost;
        }

        @Override
        public Object key() {
            return key;
        }

        @Override
        public SubchannelPicker picker() {
            return picker;
        }

        @Override
        public ClientStreamTracer.Factory tracers() {
            return new ClientStreamTracer.Factory() {};
        }

        @Override
        public double cost(long now) {
            return cost;
        }

        @Override
        public double measuredCost(long now) {
            return cost;
        }

        @Override
        public double load(long now) {
            return inSlowStart(now) ? Double.POSITIVE_INFINITY : cost * (outstanding + 1);
        }

        @Override
        public boolean inSlowStart(long now) {
            return slowStartSince != Long.MIN_VALUE && now - slowStartSince < slowStartWindow;
        }

        @Override
        public double slowStartWeight(long now) {
            return Math.max(0.1, (now - slowStartSince) / (double) slowStartWindow);
        }

        @Override
        public long slowStartEnds() {
            return slowStartSince == Long.MIN_VALUE ? Long.MIN_VALUE : slowStartSince + slowStartWindow;
        }

        @Override
        public boolean probeDue(long now) {
            return outstanding == 0 && (lastProbe == Long.MIN_VALUE || now - lastProbe >= TimeUnit.SECONDS.toNanos(1));
        }

        @Override
        public boolean claimProbe(long now) {
            if (probeDue(now)) {
                lastProbe = now;
                return true;
            }
            return false;
        }

        @Override
        public boolean slowStartUnreported() {
            return false;
        }

        @Override
        public boolean claimSlowStartReport() {
            return false;
        }
    }
}
