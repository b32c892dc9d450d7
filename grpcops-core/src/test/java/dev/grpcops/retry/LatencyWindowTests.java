package dev.grpcops.retry;

import static org.assertj.core.api.Assertions.assertThat;

import dev.grpcops.testing.FakeClock;
import org.junit.jupiter.api.Test;

/** The hedge delay's estimate: a percentile of the newest seconds of answers it needs (up to 30), on a fake clock. */
class LatencyWindowTests {

    private final FakeClock clock = new FakeClock();

    private static long ms(double millis) {
        return (long) (millis * 1_000_000);
    }

    @Test
    void bucketsHoldEveryLatencyWithinSixPercent() {
        for (long micros :
                new long[] {0, 1, 15, 16, 17, 31, 32, 33, 100, 999, 1000, 1023, 1024, 12_345, 987_654, 60_000_000}) {
            long upper = LatencyWindow.upperMicros(LatencyWindow.bucket(micros * 1000));
            assertThat(upper).as("bucket of %d µs", micros).isGreaterThanOrEqualTo(micros);
            assertThat(upper).as("bucket of %d µs", micros).isLessThanOrEqualTo(Math.max(micros, (long)
                    (micros * 1.0625)));
        }
        assertThat(LatencyWindow.bucket(Long.MAX_VALUE)).isEqualTo(LatencyWindow.bucket(Long.MAX_VALUE / 2));
    }

    @Test
    void thePercentileOfTheAnswersSeenAfterTheFirst64() {
        LatencyWindow window = new LatencyWindow(99, clock.nanoClock());
        for (int i = 0; i < 63; i++) {
            window.record(ms(1));
        }
        assertThat(window.percentileNanos()).as("no estimate before 64 answers").isEqualTo(-1);
        window.record(ms(1));
        assertThat(window.count()).isEqualTo(64);
        assertThat(window.percentileNanos()).isBetween(ms(1), ms(1.07));

        // 1000 answers, one in a hundred slow: once a second passes, the 99th percentile is the fast ones'.
        for (int i = 0; i < 1000; i++) {
            clock.forwardMillis(1);
            window.record(i % 100 == 0 ? ms(200) : ms(2));
        }
        assertThat(window.percentileNanos()).isBetween(ms(2), ms(2.13));
        assertThat(window.count()).isGreaterThan(900);
    }

    @Test
    void aBusyMinuteDoesNotMoveTheEstimateBetweenRecomputations() {
        LatencyWindow window = new LatencyWindow(99.5, clock.nanoClock());
        for (int i = 0; i < 2000; i++) {
            window.record(ms(3));
        }
        long estimate = window.percentileNanos();
        // A burst of slow answers within the same second: the estimate waits for the second to pass.
        for (int i = 0; i < 500; i++) {
            window.record(ms(50));
        }
        assertThat(window.percentileNanos()).isEqualTo(estimate);
        clock.forwardMillis(1001);
        window.record(ms(3));
        assertThat(window.percentileNanos()).isGreaterThanOrEqualTo(ms(50));
    }

    @Test
    void answersOlderThanTheWindowAreForgotten() {
        // At 99.5 the estimate wants 2000 answers: at ten a second it takes all 30 s it has.
        LatencyWindow window = new LatencyWindow(99.5, clock.nanoClock());
        for (int i = 0; i < 1000; i++) {
            window.record(ms(100));
        }
        assertThat(window.percentileNanos()).isGreaterThanOrEqualTo(ms(100));
        for (int i = 0; i < 290; i++) {
            clock.forwardMillis(100);
            window.record(ms(1));
        }
        assertThat(window.percentileNanos())
                .as("29 s on: the slow ones still count")
                .isGreaterThanOrEqualTo(ms(100));
        // 40 s in all: the slow ones are out of every slot.
        for (int i = 0; i < 110; i++) {
            clock.forwardMillis(100);
            window.record(ms(1));
        }
        assertThat(window.percentileNanos()).isBetween(ms(1), ms(1.07));
        assertThat(window.count()).isBetween(290L, 310L);
    }

    @Test
    void aColdStartLeavesTheEstimateOnceEnoughNewerAnswersAreIn() {
        LatencyWindow window = new LatencyWindow(99.5, clock.nanoClock());
        // A just-started process: its first 500 answers slow, then a thousand fast ones a second.
        for (int i = 0; i < 500; i++) {
            window.record(ms(80));
        }
        for (int i = 0; i < 1500; i++) {
            clock.forwardMillis(1);
            window.record(ms(2));
        }
        assertThat(window.percentileNanos()).as("1.5 s on").isGreaterThanOrEqualTo(ms(80));
        for (int i = 0; i < 2000; i++) {
            clock.forwardMillis(1);
            window.record(ms(2));
        }
        // The newest whole seconds hold the 2000 answers the estimate wants: the slow second is out.
        assertThat(window.percentileNanos()).as("3.5 s on").isBetween(ms(2), ms(2.13));
        assertThat(window.count()).as("min-samples still counts all 30 s").isGreaterThanOrEqualTo(3500);
    }
}
