package dev.grpcops.guard;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

class RateLimitedLogTests {

    private final AtomicLong now = new AtomicLong(1_000);
    private final List<String> lines = new ArrayList<>();
    private final RateLimitedLog log = new RateLimitedLog(lines::add, Duration.ofSeconds(10), now::get);

    @Test
    void firstOccurrenceIsLoggedAtOnceAndTheRestCountedIntoTheNextLine() {
        log.warn("bad request");
        for (int i = 0; i < 2_000; i++) {
            log.warn("bad request");
        }
        assertThat(lines).containsExactly("bad request (1 time since the last such line; at most one line per PT10S)");

        now.addAndGet(Duration.ofSeconds(10).toNanos());
        log.warn("bad request");
        assertThat(lines).hasSize(2).last().asString().startsWith("bad request (2001 times since the last such line");
    }

    @Test
    void quietIntervalsLogNothing() {
        log.warn("x");
        now.addAndGet(Duration.ofSeconds(30).toNanos());
        assertThat(lines).hasSize(1);
        log.warn("x");
        assertThat(lines).hasSize(2).last().asString().startsWith("x (1 time");
    }
}
