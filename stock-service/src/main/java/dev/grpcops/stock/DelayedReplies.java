package dev.grpcops.stock;

import io.grpc.Status;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import java.time.Duration;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.springframework.beans.factory.DisposableBean;
import org.springframework.stereotype.Component;

/**
 * Replies sent later, without a thread per waiting call: one scheduler thread holds every
 * pending reply, and a reply whose caller has gone is removed at once. At most
 * {@code stock.max-pending-replies} wait at once; the gauge {@code stock_replies_pending} shows
 * how many do.
 */
@Component
class DelayedReplies implements DisposableBean {

    static final String PROPERTY = "stock.max-pending-replies";

    private final ScheduledThreadPoolExecutor scheduler = new ScheduledThreadPoolExecutor(1, runnable -> {
        Thread thread = new Thread(runnable, "stock-delayed-replies");
        thread.setDaemon(true);
        return thread;
    });
    private final AtomicInteger pending = new AtomicInteger();
    private final int maxPending;

    DelayedReplies(ReplyProperties properties, MeterRegistry registry) {
        this.maxPending = properties.maxPendingReplies();
        scheduler.setRemoveOnCancelPolicy(true);
        Gauge.builder("stock.replies.pending", pending, AtomicInteger::get)
                .description("Check replies waiting out their delay_ms")
                .register(registry);
    }

    /**
     * Takes a place for one delayed reply, or throws {@code RESOURCE_EXHAUSTED} when
     * {@code stock.max-pending-replies} are already waiting. The place is given back when the
     * reply is sent, cancelled or {@linkplain Slot#release() released}.
     */
    Slot reserve() {
        int current;
        do {
            current = pending.get();
            if (current >= maxPending) {
                throw Status.RESOURCE_EXHAUSTED
                        .withDescription("stock: " + current + " replies already wait out their delay_ms, the limit ("
                                + PROPERTY + " = " + maxPending + "); call again later or with a shorter delay_ms")
                        .asRuntimeException();
            }
        } while (!pending.compareAndSet(current, current + 1));
        return new Slot();
    }

    int pending() {
        return pending.get();
    }

    @Override
    public void destroy() {
        scheduler.shutdownNow();
    }

    /** A reserved place for one pending reply. */
    final class Slot {

        private final AtomicBoolean released = new AtomicBoolean();
        private volatile ScheduledFuture<?> scheduled;

        private Slot() {}

        /** Gives the place back; only the first call counts. */
        void release() {
            if (released.compareAndSet(false, true)) {
                pending.decrementAndGet();
            }
        }

        /** Runs {@code reply} after {@code delay}, unless cancelled first; the place is given back before it runs. */
        void schedule(Duration delay, Runnable reply) {
            if (released.get()) {
                return; // cancelled before it was scheduled
            }
            scheduled = scheduler.schedule(
                    () -> {
                        if (released.compareAndSet(false, true)) {
                            pending.decrementAndGet();
                            reply.run();
                        }
                    },
                    delay.toNanos(),
                    TimeUnit.NANOSECONDS);
            if (released.get()) {
                scheduled.cancel(false); // cancelled while being scheduled
            }
        }

        /** Drops the reply (if not sent yet) and gives the place back at once. */
        void cancel() {
            release();
            ScheduledFuture<?> future = scheduled;
            if (future != null) {
                future.cancel(false);
            }
        }
    }
}
