package dev.grpcops.stock;

import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import java.time.Duration;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import org.springframework.beans.factory.DisposableBean;
import org.springframework.stereotype.Component;

/**
 * Replies sent later, without a thread per waiting call: one scheduler thread holds every
 * pending reply, and a reply whose caller has gone is removed at once. The gauge
 * {@code stock_replies_pending} shows how many are waiting.
 */
@Component
class DelayedReplies implements DisposableBean {

    private final ScheduledThreadPoolExecutor scheduler = new ScheduledThreadPoolExecutor(1, runnable -> {
        Thread thread = new Thread(runnable, "stock-delayed-replies");
        thread.setDaemon(true);
        return thread;
    });

    DelayedReplies(MeterRegistry registry) {
        scheduler.setRemoveOnCancelPolicy(true);
        Gauge.builder("stock.replies.pending", scheduler, s -> s.getQueue().size())
                .description("Check replies waiting out their delay_ms")
                .register(registry);
    }

    /** Runs {@code reply} after {@code delay}; cancel the returned future to drop it. */
    ScheduledFuture<?> after(Duration delay, Runnable reply) {
        return scheduler.schedule(reply, delay.toNanos(), TimeUnit.NANOSECONDS);
    }

    int pending() {
        return scheduler.getQueue().size();
    }

    @Override
    public void destroy() {
        scheduler.shutdownNow();
    }
}
