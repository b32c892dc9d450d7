package dev.grpcops.internal;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import dev.grpcops.testing.FakeClock;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** The hedge timer: tasks run once their delay is over, in deadline order; cancelled ones never. */
@Timeout(30)
class CoarseTimerTests {

    private final CoarseTimer timer = new CoarseTimer("test-timer", TimeUnit.MILLISECONDS.toNanos(1));

    @AfterEach
    void stop() throws InterruptedException {
        timer.shutdown();
        assertThat(timer.awaitTermination(5, TimeUnit.SECONDS)).isTrue();
    }

    @Test
    void aTaskRunsOnceItsDelayIsOverNeverBefore() throws Exception {
        for (long delayMs : new long[] {0, 3, 20, 60}) {
            long start = System.nanoTime();
            ScheduledFuture<Long> ran = timer.schedule(System::nanoTime, delayMs, TimeUnit.MILLISECONDS);
            long at = ran.get(5, TimeUnit.SECONDS);
            assertThat(at - start)
                    .as("delay %d ms", delayMs)
                    .isGreaterThanOrEqualTo(TimeUnit.MILLISECONDS.toNanos(delayMs));
            assertThat(ran.isDone()).isTrue();
        }
    }

    /** On a clock of the test's: the order comes from the deadlines, however slowly they were scheduled. */
    @Test
    void tasksRunInDeadlineOrderWhateverTheOrderTheyCameIn() throws Exception {
        FakeClock clock = new FakeClock();
        CoarseTimer onFakeTime =
                new CoarseTimer("fake-time-timer", TimeUnit.MILLISECONDS.toNanos(1), clock.nanoClock());
        try {
            List<Integer> order = new CopyOnWriteArrayList<>();
            onFakeTime.schedule(() -> order.add(3), 30, TimeUnit.MILLISECONDS);
            onFakeTime.schedule(() -> order.add(1), 10, TimeUnit.MILLISECONDS);
            onFakeTime.schedule(() -> order.add(2), 20, TimeUnit.MILLISECONDS);
            onFakeTime.schedule(() -> order.add(0), 1, TimeUnit.MILLISECONDS);
            clock.forwardMillis(30);
            onFakeTime.schedule(() -> {}, 0, TimeUnit.NANOSECONDS).get(5, TimeUnit.SECONDS); // wakes the timer
            await().atMost(Duration.ofSeconds(5)).until(() -> order.size() == 4);
            assertThat(order).containsExactly(0, 1, 2, 3);
        } finally {
            onFakeTime.shutdown();
        }
    }

    /**
     * A batch of tasks takes time (each starts a hedge): what fell due meanwhile runs right after it,
     * not a tick later, when the timer would have woken from the time it read before the batch.
     */
    @Test
    void aTaskDueWhileABatchRanRunsRightAfterIt() throws Exception {
        FakeClock clock = new FakeClock();
        // One-second ticks, on a clock of the test's: a stale "now" would mean a real second's sleep.
        CoarseTimer onFakeTime = new CoarseTimer("fake-time-timer", TimeUnit.SECONDS.toNanos(1), clock.nanoClock());
        try {
            java.util.concurrent.CompletableFuture<Long> laterRan = new java.util.concurrent.CompletableFuture<>();
            onFakeTime.schedule(() -> laterRan.complete(System.nanoTime()), 500, TimeUnit.MILLISECONDS);
            long[] batchEnded = new long[1];
            onFakeTime
                    .schedule(
                            () -> {
                                clock.forward(Duration.ofSeconds(5)); // the batch takes long
                                batchEnded[0] = System.nanoTime();
                            },
                            0,
                            TimeUnit.NANOSECONDS)
                    .get(5, TimeUnit.SECONDS);
            long ran = laterRan.get(5, TimeUnit.SECONDS);
            assertThat(Duration.ofNanos(ran - batchEnded[0]))
                    .as("after the batch, not a whole tick (a real second) later")
                    .isLessThan(Duration.ofMillis(500));
        } finally {
            onFakeTime.shutdown();
        }
    }

    @Test
    void anEarlierTaskWakesATimerAsleepForALaterOne() throws Exception {
        timer.schedule(() -> {}, 10, TimeUnit.SECONDS);
        await().atMost(Duration.ofSeconds(5)).until(() -> timer.sleepingUntil() != Long.MAX_VALUE);
        long start = System.nanoTime();
        timer.schedule(() -> {}, 1, TimeUnit.MILLISECONDS).get(5, TimeUnit.SECONDS);
        assertThat(System.nanoTime() - start).as("not at the 10 s task's time").isLessThan(TimeUnit.SECONDS.toNanos(5));
    }

    @Test
    void aCancelledTaskNeverRunsAndManyCancelledLeaveTheQueue() throws Exception {
        AtomicInteger runs = new AtomicInteger();
        for (int i = 0; i < 5000; i++) {
            ScheduledFuture<?> task = timer.schedule(runs::incrementAndGet, 1, TimeUnit.HOURS);
            assertThat(task.cancel(false)).isTrue();
            assertThat(task.isCancelled()).isTrue();
            assertThat(task.cancel(false)).as("once").isFalse();
        }
        // Woken by a task due now, the timer drops the cancelled ones (most of its queue) at once:
        // they are not kept for the hour until their time.
        timer.schedule(runs::incrementAndGet, 0, TimeUnit.MILLISECONDS).get(5, TimeUnit.SECONDS);
        await().atMost(Duration.ofSeconds(5)).until(() -> timer.cancelledWaiting() == 0);
        assertThat(runs).hasValue(1);
        assertThatThrownBy(() -> {
                    ScheduledFuture<?> gone = timer.schedule(() -> {}, 1, TimeUnit.SECONDS);
                    gone.cancel(false);
                    gone.get();
                })
                .isInstanceOf(java.util.concurrent.CancellationException.class);
    }

    @Test
    void aTaskThatThrowsHoldsItsFailureAndTheTimerGoesOn() throws Exception {
        ScheduledFuture<Object> failing = timer.schedule(
                () -> {
                    throw new IllegalStateException("boom");
                },
                1,
                TimeUnit.MILLISECONDS);
        assertThatThrownBy(() -> failing.get(5, TimeUnit.SECONDS))
                .isInstanceOf(ExecutionException.class)
                .hasCauseInstanceOf(IllegalStateException.class);
        assertThat(timer.schedule(() -> "next", 1, TimeUnit.MILLISECONDS).get(5, TimeUnit.SECONDS))
                .isEqualTo("next");
    }

    @Test
    void afterShutdownNothingIsTaken() {
        timer.shutdown();
        assertThatThrownBy(() -> timer.schedule(() -> {}, 1, TimeUnit.MILLISECONDS))
                .isInstanceOf(RejectedExecutionException.class);
        assertThatThrownBy(() -> timer.scheduleAtFixedRate(() -> {}, 1, 1, TimeUnit.MILLISECONDS))
                .isInstanceOf(UnsupportedOperationException.class);
    }
}
