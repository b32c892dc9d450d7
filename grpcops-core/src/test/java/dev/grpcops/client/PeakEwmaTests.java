package dev.grpcops.client;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/** The peak-EWMA arithmetic with a fake clock (milliseconds here; τ = 10 s). */
class PeakEwmaTests {

    private static final long MS = 1_000_000L;
    private static final long TAU = 10_000 * MS;

    @ParameterizedTest(name = "cost {0} ms, {1} ms later a sample of {2} ms (lower bound: {3}) -> {4} ms")
    @CsvSource({
        // a slower sample is taken at once: the peak
        "1,    10,     200,   false, 200",
        // a faster one pulls the average down by 1 - e^(-Δt/τ): after 1 s, by 9.5 %
        "200,  1000,   1,     false, 181.06",
        // after 30 s, almost to the sample
        "200,  30000,  1,     false, 10.91",
        // a call cut short only raises it
        "200,  1000,   5,     true,  180.97",
        "1,    10,     50,    true,  50",
    })
    void samples(double costMs, long afterMs, double sampleMs, boolean lowerBound, double expectedMs) {
        PeakEwma ewma = new PeakEwma(costMs * MS, 0);
        ewma.observe(afterMs * MS, sampleMs * MS, lowerBound, TAU);
        assertThat(ewma.cost(afterMs * MS, TAU) / MS).isCloseTo(expectedMs, within(0.05));
    }

    @Test
    void aReplicaNotHeardFromDecaysTowardsZeroSoItIsTriedAgain() {
        PeakEwma ewma = new PeakEwma(200 * MS, 0);
        assertThat(ewma.cost(0, TAU) / MS).isEqualTo(200);
        assertThat(ewma.cost(10_000 * MS, TAU) / MS).isCloseTo(73.58, within(0.01));
        assertThat(ewma.cost(60_000 * MS, TAU) / MS).isLessThan(1);
    }
}
