package dev.grpcops.client;

import io.grpc.ConnectivityState;
import io.grpc.ManagedChannel;
import java.time.Duration;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import org.springframework.beans.factory.DisposableBean;

/**
 * gRPC waits longer and longer (1 s, 1.6 s, 2.6 s, ...) between attempts to reach a backend that
 * is down, so a backend that comes back after a restart can sit unused for seconds. For a channel
 * that reaches no backend at all, this skips the wait every interval: it is back within about one
 * interval. A channel with some backend up keeps gRPC's backoff for the others.
 */
public final class ReconnectNudger implements DisposableBean {

    private final Set<ManagedChannel> channels = ConcurrentHashMap.newKeySet();
    private final ScheduledExecutorService scheduler = Executors.newSingleThreadScheduledExecutor(runnable -> {
        Thread thread = new Thread(runnable, "grpcops-reconnect");
        thread.setDaemon(true);
        return thread;
    });

    /** @param interval how often to check; zero or negative never nudges */
    public ReconnectNudger(Duration interval) {
        if (!interval.isNegative() && !interval.isZero()) {
            scheduler.scheduleWithFixedDelay(this::nudge, interval.toMillis(), interval.toMillis(), TimeUnit.MILLISECONDS);
        }
    }

    /**
     * Watches {@code channel}, and starts connecting it now: a channel left idle until the first
     * call makes that call pay for the connection (and the health check) out of its deadline.
     */
    public void watch(ManagedChannel channel) {
        channels.add(channel);
        channel.getState(true);
    }

    private void nudge() {
        channels.removeIf(ManagedChannel::isShutdown);
        for (ManagedChannel channel : channels) {
            if (channel.getState(false) == ConnectivityState.TRANSIENT_FAILURE) {
                channel.resetConnectBackoff();
            }
        }
    }

    @Override
    public void destroy() {
        scheduler.shutdownNow();
    }
}
