package dev.grpcops.client;

import dev.grpcops.Experimental;
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
 * gRPC waits longer and longer (1 s, 1.6 s, 2.6 s, ... up to 2 minutes) between attempts to reach
 * a backend that is down, so a backend that comes back after a restart, or whose network heals
 * after a partition, can sit unused for 10–20 s or more. While a watched channel reaches no
 * backend at all ({@code TRANSIENT_FAILURE}), or while its balancer (the library's) has a replica
 * it cannot reach, this skips that wait every interval, so the backend is back within about one
 * interval. It follows each channel's state changes and its balancer's reports: a healthy channel
 * costs nothing.
 */
@Experimental("Until grpc-java offers a shorter reconnect backoff per channel, when this may go")
public final class ReconnectNudger implements AutoCloseable {

    private static final Logger log = LoggerFactory.getLogger(ReconnectNudger.class);

    private final Duration interval;
    private final ScheduledExecutorService scheduler = SharedScheduler.get();
    private volatile boolean closed;
    private final java.util.List<Watched> watched = new java.util.concurrent.CopyOnWriteArrayList<>();
    /** A balancer has replicas down for an authority: its channels are nudged. */
    private final java.util.function.Consumer<String> replicasDown = this::replicasDown;

    /** @param interval how long a channel stays without a backend before it is nudged; zero or negative never nudges */
    public ReconnectNudger(Duration interval) {
        this.interval = interval;
        if (enabled()) {
            ReplicasDown.listen(replicasDown);
        }
    }

    /**
     * Follows {@code channel}'s state, and starts connecting it now: a channel left idle until the
     * first call makes that call pay for the connection (and the health check) out of its deadline.
     */
    public void watch(ManagedChannel channel) {
        ConnectivityState state = channel.getState(true);
        if (enabled()) {
            Watched followed = new Watched(channel);
            watched.add(followed);
            followed.follow(state);
        }
    }

    @Override
    public void close() {
        closed = true;
        ReplicasDown.stopListening(replicasDown);
        watched.clear();
    }

    private void replicasDown(String authority) {
        for (Watched channel : watched) {
            if (channel.channel.isShutdown()) {
                watched.remove(channel);
            } else if (authority.equals(channel.authority)) {
                channel.startNudging();
            }
        }
    }

    private boolean enabled() {
        return !interval.isNegative() && !interval.isZero();
    }

    /** One channel: nudged every interval while in TRANSIENT_FAILURE, by at most one chain of nudges. */
    private final class Watched {

        private final ManagedChannel channel;
        private final String authority;
        private final AtomicBoolean nudging = new AtomicBoolean();

        Watched(ManagedChannel channel) {
            this.channel = channel;
            this.authority = channel.authority();
        }

        void follow(ConnectivityState state) {
            if (channel.isShutdown() || closed) {
                watched.remove(this);
                return;
            }
            if (state == ConnectivityState.TRANSIENT_FAILURE || ReplicasDown.any(authority)) {
                startNudging();
            }
            channel.notifyWhenStateChanged(state, () -> follow(channel.getState(false)));
        }

        void startNudging() {
            if (!closed && nudging.compareAndSet(false, true)) {
                schedule();
            }
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

        /** No backend at all, or some its balancer cannot reach: worth a nudge. */
        private boolean withoutBackend() {
            return !channel.isShutdown()
                    && (channel.getState(false) == ConnectivityState.TRANSIENT_FAILURE || ReplicasDown.any(authority));
        }
    }
}
