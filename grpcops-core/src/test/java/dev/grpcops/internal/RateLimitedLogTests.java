package dev.grpcops.internal;

import static org.assertj.core.api.Assertions.assertThat;

import dev.grpcops.testing.FakeClock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

class RateLimitedLogTests {

    private final FakeClock clock = new FakeClock();
    private final List<String> lines = new ArrayList<>();
    private final RateLimitedLog log = new RateLimitedLog(lines::add, Duration.ofSeconds(10), clock.nanoClock());

    @Test
    void firstOccurrenceIsLoggedAtOnceAndTheRestCountedIntoTheNextLine() {
        log.warn("bad request");
        for (int i = 0; i < 2_000; i++) {
            log.warn("bad request");
        }
        assertThat(lines).containsExactly("bad request (1 time since the last such line; at most one line per PT10S)");

        clock.forward(Duration.ofSeconds(10));
        log.warn("bad request");
        assertThat(lines).hasSize(2).last().asString().startsWith("bad request (2001 times since the last such line");
    }

    @Test
    void quietIntervalsLogNothing() {
        log.warn("x");
        clock.forward(Duration.ofSeconds(30));
        assertThat(lines).hasSize(1);
        log.warn("x");
        assertThat(lines).hasSize(2).last().asString().startsWith("x (1 time");
    }
}
