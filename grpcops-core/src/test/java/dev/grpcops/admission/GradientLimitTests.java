package dev.grpcops.admission;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The adaptive limit's rules, on a simulated server and simulated time: a server whose calls take
 * {@code base} and that runs {@code capacity} of them at once without slowing down; beyond that,
 * each call takes longer in proportion (the seats share its cores).
 */
@Timeout(30)
class GradientLimitTests {

    private static final long MS = 1_000_000L;
    private static final AdaptiveLimit CONFIG = AdaptiveLimit.builder()
            .minLimit(8)
            .maxLimit(512)
            .window(Duration.ofSeconds(1))
            .build();

    /** Simulated time and a server under a flood: every seat the limit gives is in use. */
    private static final class Flood {
        final GradientLimit limit;
        long now;
        double capacity;
        long baseNanos;
        /** Latency of the service's own, whatever the concurrency (a slower dependency, a slower disk). */
        long ownNanos;

        Flood(int initialLimit, double capacity, long baseNanos) {
            this.limit = new GradientLimit(CONFIG, initialLimit);
            this.capacity = capacity;
            this.baseNanos = baseNanos;
        }

        long latency(int seats) {
            return (long) (baseNanos * Math.max(1.0, seats / capacity)) + ownNanos;
        }

        /** {@code windows} seconds of 20 answers each; the limit after each second. */
        List<Integer> run(int windows) {
            List<Integer> limits = new ArrayList<>();
            for (int w = 0; w < windows; w++) {
                for (int i = 0; i < 20; i++) {
                    now += 50 * MS;
                    int seats = limit.limit();
                    limit.sample(now, latency(seats), seats);
                }
                limits.add(limit.limit());
            }
            return limits;
        }

        int last(int windows) {
            List<Integer> limits = run(windows);
            return limits.get(limits.size() - 1);
        }
    }

    @Test
    void theFirstCallsRunWithTheMinimumSeatsToMeasureTheBaseline() {
        GradientLimit limit = new GradientLimit(CONFIG, 128);
        assertThat(limit.limit()).isEqualTo(8);
        for (int i = 1; i <= GradientLimit.MIN_SAMPLES; i++) {
            limit.sample(i * MS * 20, 10 * MS, 8);
        }
        assertThat(limit.probing()).isFalse();
        assertThat(limit.baselineNanos()).isEqualTo(10.0 * MS);
        assertThat(limit.limit()).as("then it starts where configured").isEqualTo(128);
    }

    @Test
    void fromAboveTheLimitFallsToTheCapacity() {
        Flood flood = new Flood(128, 16, 10 * MS);
        int settled = flood.last(60);
        // It settles where latency is within the tolerance of the baseline: 16 to 1.5 × 16, plus headroom.
        assertThat(settled).isBetween(16, 36);
        assertThat(flood.latency(settled)).isLessThanOrEqualTo((long) (2.5 * 10 * MS));
    }

    @Test
    void fromBelowTheLimitGrowsToTheCapacity() {
        Flood flood = new Flood(8, 64, 10 * MS);
        assertThat(flood.last(60)).isBetween(64, 128);
    }

    @Test
    void theSeatsFollowTheCapacityBothWays() {
        Flood flood = new Flood(32, 32, 10 * MS);
        int before = flood.last(30);
        flood.capacity = 8; // half the cores gone, say
        int fewer = flood.last(40);
        flood.capacity = 32;
        int after = flood.last(40);
        assertThat(fewer).isLessThan(before / 2);
        assertThat(after).isGreaterThan(fewer * 2).isBetween(32, 64);
    }

    /**
     * Calls that also wait on others (a dependency) hold their seats through the wait: the limit is of
     * calls working, and the seats are that times seat time over own time, so that the calls waiting
     * do not take the seats of the calls working; once the waits end, the seats are the limit again.
     */
    @Test
    void callsWaitingOnOthersGetSeatsBesideTheCallsWorking() {
        GradientLimit working = new GradientLimit(CONFIG, 32);
        GradientLimit waiting = new GradientLimit(CONFIG, 32);
        long now = 0;
        for (int i = 0; i < GradientLimit.MIN_SAMPLES; i++) {
            now += 20 * MS;
            working.sample(now, 10 * MS, 8);
            waiting.sample(now, 10 * MS, 10 * MS, 8);
        }
        // The same own time in both, within the tolerance; the waiting calls hold their seats 4 × as long.
        for (int window = 0; window < 10; window++) {
            for (int i = 0; i < 20; i++) {
                now += 50 * MS;
                working.sample(now, 12 * MS, working.limit());
                waiting.sample(now, 12 * MS, 48 * MS, waiting.limit());
            }
        }
        assertThat(working.limit()).as("grown from 32").isGreaterThan(32);
        GradientLimit probed = new GradientLimit(CONFIG, 32);
        long at = 0;
        boolean firstProbeOver = false;
        for (int i = 0; i < 40 * 20 && !(firstProbeOver && probed.probing()); i++) {
            at += 50 * MS;
            probed.sample(at, 12 * MS, 48 * MS, probed.limit());
            firstProbeOver |= !probed.probing();
        }
        assertThat(probed.probing()).as("a periodic probe within 40 windows").isTrue();
        assertThat(probed.limit())
                .as("a probe's seats: the minimum of calls working, 4 seats each")
                .isBetween(30, 32);
        assertThat(waiting.limit())
                .as("seats for %d calls working, each 4 × as long in its seat", working.limit())
                .isBetween(4 * working.limit() - 4, 4 * working.limit());

        for (int i = 0; i < 200; i++) {
            now += 50 * MS;
            working.sample(now, 12 * MS, working.limit());
            waiting.sample(now, 12 * MS, 12 * MS, waiting.limit());
        }
        assertThat(waiting.limit())
                .as("ten windows after the waits are over")
                .isBetween(working.limit() - 4, working.limit() + 4);
    }

    /** A lower target is taken by half a step, a higher one by a fifth: falls are fast, growth cautious. */
    @Test
    void aServerMadeSmallerShedsItsQueueingWithinAFewWindows() {
        Flood flood = new Flood(256, 256, 10 * MS);
        flood.run(10);
        flood.capacity = 32; // each call costs eight times the CPU, say

        List<Integer> limits = flood.run(8);

        // 297 seats before; taking a fifth of each lower target, about 160 after eight windows.
        assertThat(limits.get(7)).as("after eight windows: %s", limits).isBetween(32, 100);
    }

    @Test
    void aLastingRiseOfTheServicesOwnLatencyDoesNotPinTheLimitAtItsMinimum() {
        Flood flood = new Flood(10, 32, 10 * MS);
        flood.run(1);
        flood.ownNanos = 60 * MS; // each call now waits 60 ms on something concurrency does not change
        List<Integer> limits = flood.run(24);
        assertThat(limits.subList(0, 12)).as("it falls at first: latency rose").contains(8);
        // Five windows at the minimum call for a probe: the re-measured baseline frees the limit,
        // long before the periodic probe (30 windows) would.
        assertThat(limits.subList(18, 24)).allMatch(seats -> seats >= 16);
        assertThat(flood.limit.baselineNanos()).isGreaterThanOrEqualTo(60.0 * MS);
    }

    @Test
    void aRiseOfLatencyThatIsNotQueueingCostsAtMostAboutHalfTheLimitBeforeAProbe() {
        Flood flood = new Flood(64, 10_000, 10 * MS); // seats never queue here
        flood.run(3);
        flood.ownNanos = 200 * MS; // a dependency turned slow: fewer seats would not help
        List<Integer> limits = flood.run(30);
        // Without the probe once the limit has halved it would fall to the minimum (8) and stay
        // there five windows. The probe itself runs with the minimum seats: a window may end in it.
        assertThat(limits).filteredOn(seats -> seats == 8).hasSizeLessThanOrEqualTo(1);
        assertThat(limits).filteredOn(seats -> seats != 8).allMatch(seats -> seats >= 28);
        assertThat(limits.get(limits.size() - 1)).isGreaterThanOrEqualTo(64);
    }

    @Test
    void aBaselineIsNeverOlderThanThirtyWindows() {
        Flood flood = new Flood(32, 32, 10 * MS);
        flood.run(5);
        flood.baseNanos = 20 * MS; // slower per call, in a way the gradient alone could not tell from queueing
        flood.run(GradientLimit.PROBE_EVERY_WINDOWS + 2);
        assertThat(flood.limit.baselineNanos()).isGreaterThanOrEqualTo(20.0 * MS);
    }

    @Test
    void aServerThatUsesLessThanHalfItsSeatsDoesNotGrowThem() {
        GradientLimit limit = new GradientLimit(CONFIG, 64);
        long now = 0;
        for (int i = 0; i < 10; i++) {
            limit.sample(now += 10 * MS, 10 * MS, 1);
        }
        for (int i = 0; i < 200; i++) {
            limit.sample(now += 50 * MS, 10 * MS, 20);
        }
        assertThat(limit.limit()).isEqualTo(64);
    }

    @Test
    void aWindowWithFewerThanTenAnswersChangesNothing() {
        GradientLimit limit = new GradientLimit(CONFIG, 64);
        long now = 0;
        for (int i = 0; i < 10; i++) {
            limit.sample(now += 10 * MS, 10 * MS, 1);
        }
        // Four answers a second: each one-second window closes with five.
        for (int i = 0; i < 100; i++) {
            limit.sample(now += 250 * MS, 100 * MS, 64); // ten times the baseline
        }
        assertThat(limit.limit()).isEqualTo(64);
    }

    @Test
    void theLimitStaysWithinItsBounds() {
        Flood starved = new Flood(8, 1, 10 * MS);
        assertThat(starved.run(60)).allMatch(seats -> seats >= 8);
        Flood idle = new Flood(500, 10_000, 10 * MS);
        assertThat(idle.run(60)).allMatch(seats -> seats <= 512);
    }
}
