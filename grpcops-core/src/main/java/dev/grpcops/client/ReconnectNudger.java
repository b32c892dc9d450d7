package dev.grpcops.client;

import dev.grpcops.internal.SharedScheduler;
import io.grpc.ConnectivityState;
import io.grpc.ManagedChannel;
import java.time.Duration;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * gRPC waits longer and longer (1 s, 1.6 s, 2.6 s, ...) between attempts to reach a backend that
 * is down, so a backend that comes back after a restart can sit unused for seconds. While a
 * watched channel reaches no backend at all ({@code TRANSIENT_FAILURE}), this skips that wait
 * every interval, so it is back within about one interval. It follows each channel's state
 * changes: a healthy channel costs nothing. A channel with some backend up keeps gRPC's backoff
 * for the others.
 */
public final class ReconnectNudger implements AutoCloseable {

    private static final Logger log = LoggerFactory.getLogger(ReconnectNudger.class);

    private final Duration interval;
    private final ScheduledExecutorService scheduler = SharedScheduler.get();
    private volatile boolean closed;

    /** @param interval how long a channel stays without a backend before it is nudged; zero or negative never nudges */
    public ReconnectNudger(Duration interval) {
        this.interval = interval;
    }

    /**
     * Follows {@code channel}'s state, and starts connecting it now: a channel left idle until the
     * first call makes that call pay for the connection (and the health check) out of its deadline.
     */
    public void watch(ManagedChannel channel) {
        ConnectivityState state = channel.getState(true);
        if (enabled()) {
            new Watched(channel).follow(state);
        }
    }

    @Override
    public void close() {
        closed = true;
    }

    private boolean enabled() {
        return !interval.isNegative() && !interval.isZero();
    }

    /** One channel: nudged every interval while in TRANSIENT_FAILURE, by at most one chain of nudges. */
    private final class Watched {

        private final ManagedChannel channel;
        private final AtomicBoolean nudging = new AtomicBoolean();

        Watched(ManagedChannel channel) {
            this.channel = channel;
        }

        void follow(ConnectivityState state) {
            if (channel.isShutdown() || closed) {
                return;
            }
            if (state == ConnectivityState.TRANSIENT_FAILURE && nudging.compareAndSet(false, true)) {
                schedule();
            }
            channel.notifyWhenStateChanged(state, () -> follow(channel.getState(false)));
        }

        private void schedule() {
            try {
                scheduler.schedule(this::nudge, interval.toNanos(), TimeUnit.NANOSECONDS);
            } catch (RejectedExecutionException shutDown) {
                nudging.set(false);
            }
        }

        private void nudge() {
            if (closed) {
                nudging.set(false);
                return;
            }
            try {
                // Round-robin stays in TRANSIENT_FAILURE while its subchannels retry, without a state
                // change to react to: keep nudging until the channel has left it.
                if (withoutBackend()) {
                    channel.resetConnectBackoff();
                } else {
                    nudging.set(false);
                    // follow() leaves a return to TRANSIENT_FAILURE to the nudges under way: one that
                    // came after the look above found them still on. Take it up, unless follow() has.
                    if (!withoutBackend() || !nudging.compareAndSet(false, true)) {
                        return;
                    }
                }
            } catch (RuntimeException e) {
                // One bad moment must not end nudging for the life of the process.
                log.warn("reconnect: nudging channel {} failed; trying again in {}", channel, interval, e);
                nudging.set(true);
            }
            schedule();
        }

        private boolean withoutBackend() {
            return !channel.isShutdown() && channel.getState(false) == ConnectivityState.TRANSIENT_FAILURE;
        }
    }
}
