package dev.grpcops.internal;

import static org.assertj.core.api.Assertions.assertThat;

import dev.grpcops.testing.FakeClock;
import io.grpc.Context;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

/** The seat of a served call: released once, at its last end, with the time it waited on others. */
class ServedSeatTests {

    private final FakeClock clock = new FakeClock();
    /** Where the test's times count from: {@link #at} moves the clock to them. */
    private final long start = clock.nanoTime();

    private final AtomicInteger releases = new AtomicInteger();
    private final AtomicLong waitedAtRelease = new AtomicLong(-1);
    private ServedSeat seat;

    private ServedSeatTests() {
        seat = ServedSeat.current(ServedSeat.attach(Context.ROOT, clock.nanoClock(), () -> {
            releases.incrementAndGet();
            waitedAtRelease.set(seat.waitedNanos());
        }));
    }

    /** Moves the clock forward to {@code millis} after the start (each test's times only go forward). */
    private void at(long millis) {
        clock.forwardNanos(start + millis * 1_000_000L - clock.nanoTime());
    }

    @Test
    void overlappingDownstreamCallsAndAHeldAnswerCountOnceAndTheSeatIsReleasedAtTheLastEnd() {
        at(10);
        assertThat(seat.started()).isTrue();
        at(20);
        assertThat(seat.started()).isTrue();
        at(50);
        seat.endedDownstream();
        seat.holdStarted(); // the answer is held while the second downstream call is still open
        at(70);
        seat.endedDownstream();
        at(90);
        seat.holdEnded();
        at(100);
        seat.ended();

        assertThat(releases).hasValue(1);
        assertThat(waitedAtRelease.get()).as("10 ms to 90 ms, once").isEqualTo(80_000_000L);
    }

    @Test
    void aHoldCutShortByTheCallsEndCountsUntilThenAndNothingAfterTheReleaseCounts() {
        at(10);
        seat.holdStarted();
        at(40);
        seat.ended(); // the caller cancelled while the answer was held
        assertThat(waitedAtRelease.get()).isEqualTo(30_000_000L);

        at(200);
        seat.holdEnded();
        assertThat(seat.started())
                .as("no downstream call counts after the last end")
                .isFalse();
        assertThat(seat.waitedNanos()).isEqualTo(30_000_000L);
        assertThat(releases).hasValue(1);
    }

    @Test
    void aCallThatWaitedOnNothingWaitedNoTime() {
        at(10);
        seat.ended();

        assertThat(waitedAtRelease.get()).isZero();
    }
}
