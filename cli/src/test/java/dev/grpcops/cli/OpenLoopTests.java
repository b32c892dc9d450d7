package dev.grpcops.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/** The open loop's schedule on a clock of the test's: when each call is due, and which are not sent. */
class OpenLoopTests {

    /** Time that moves only when the loop waits; records what was sent when. */
    private static final class Recording implements OpenLoop.Sender, OpenLoop.Clock {
        long now = TimeUnit.HOURS.toNanos(1);
        final long start = now;
        final List<Long> dueOffsets = new ArrayList<>();
        final List<Long> sentAt = new ArrayList<>();
        int outstanding;
        /** Extra time each wait takes: a machine that falls behind. */
        long lateBy;

        @Override
        public long nanoTime() {
            return now;
        }

        @Override
        public void waitUntil(long dueNanos) {
            now = Math.max(now, dueNanos + lateBy);
        }

        @Override
        public int outstanding() {
            return outstanding;
        }

        @Override
        public void send(long dueNanos, LoadStats stats) {
            stats.sent();
            dueOffsets.add(dueNanos - start);
            sentAt.add(now - start);
        }
    }

    @Test
    void callIIsDueAtStartPlusIOverTheRateForTheWholeDuration() throws InterruptedException {
        Recording recording = new Recording();
        LoadStats stats = new LoadStats();
        new OpenLoop(recording, 200, 1000, recording).run(stats, TimeUnit.SECONDS.toNanos(3), 0);

        assertThat(recording.dueOffsets).hasSize(600);
        for (int i = 0; i < 600; i++) {
            assertThat(recording.dueOffsets.get(i)).as("call %d", i).isEqualTo(i * 5_000_000L);
        }
        assertThat(stats.sentCount()).isEqualTo(600);
    }

    @Test
    void aLoopThatFellBehindKeepsEachCallsIntendedTime() throws InterruptedException {
        Recording recording = new Recording();
        recording.lateBy = TimeUnit.MILLISECONDS.toNanos(7); // every wait oversleeps by more than a period
        new OpenLoop(recording, 200, 1000, recording).run(new LoadStats(), 0, 100);

        assertThat(recording.dueOffsets).hasSize(100);
        assertThat(recording.dueOffsets.get(99)).as("intended").isEqualTo(99 * 5_000_000L);
        assertThat(recording.sentAt.get(99)).as("actually sent later").isGreaterThan(recording.dueOffsets.get(99));
    }

    @Test
    void aSendDueWhileTooManyAreOutstandingIsCountedAsClientOverloaded() throws InterruptedException {
        Recording recording = new Recording();
        recording.outstanding = 8;
        LoadStats stats = new LoadStats();
        new OpenLoop(recording, 100, 8, recording).run(stats, 0, 10);

        assertThat(recording.dueOffsets).isEmpty();
        assertThat(stats.sentCount()).isEqualTo(10);
        assertThat(stats.statuses()).containsEntry(LoadStats.CLIENT_OVERLOADED, 10L);
    }
}
