package dev.grpcops.internal;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

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

    @Test
    void tasksRunInDeadlineOrderWhateverTheOrderTheyCameIn() throws Exception {
        List<Integer> order = new CopyOnWriteArrayList<>();
        timer.schedule(() -> order.add(3), 30, TimeUnit.MILLISECONDS);
        timer.schedule(() -> order.add(1), 10, TimeUnit.MILLISECONDS);
        timer.schedule(() -> order.add(2), 20, TimeUnit.MILLISECONDS);
        // An earlier task after the thread went to sleep for a later one wakes it.
        timer.schedule(() -> order.add(0), 1, TimeUnit.MILLISECONDS);
        await().atMost(Duration.ofSeconds(5)).until(() -> order.size() == 4);
        assertThat(order).containsExactly(0, 1, 2, 3);
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
            ScheduledFuture<?> task = timer.schedule(runs::incrementAndGet, 200, TimeUnit.MILLISECONDS);
            assertThat(task.cancel(false)).isTrue();
            assertThat(task.isCancelled()).isTrue();
            assertThat(task.cancel(false)).as("once").isFalse();
        }
        ScheduledFuture<?> kept = timer.schedule(runs::incrementAndGet, 250, TimeUnit.MILLISECONDS);
        kept.get(5, TimeUnit.SECONDS);
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
