package dev.grpcops.stock;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

class CallLogTests {

    @Test
    void keepsTheNewestSamplesAndCountsEveryCall() {
        CallLog log = new CallLog(new StockProperties(10, 2));
        for (int i = 0; i < 3; i++) {
            log.record("a", null);
        }
        assertThat(log.stats("a").getCalls()).isEqualTo(3);
        assertThat(log.stats("a").getReceivedDeadlineSList()).hasSize(2);
    }
}
