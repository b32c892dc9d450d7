package dev.grpcops.client;

import io.grpc.CallOptions;
import io.grpc.Channel;
import io.grpc.ClientCall;
import io.grpc.ClientInterceptor;
import io.grpc.ConnectivityState;
import io.grpc.ManagedChannel;
import io.grpc.MethodDescriptor;
import java.time.Duration;
import java.util.function.LongSupplier;

/**
 * Lets the calls of a channel that has not been READY yet wait for a replica instead of failing at
 * once with {@code UNAVAILABLE}: a service started together with its downstream (or before it) sends
 * its first calls with gRPC's wait-for-ready, so they wait within their own deadline while the
 * connection is made. Once the channel has been READY, and past {@code window} after it was made
 * (a downstream that is not there), calls fail fast as usual, so that callers learn of an outage at
 * once and retry elsewhere. Costs a volatile read per call.
 *
 * <pre>{@code
 * ReadinessGate gate = new ReadinessGate(Duration.ofSeconds(5));
 * ManagedChannel channel = ManagedChannelBuilder.forTarget(...).intercept(gate).build();
 * gate.follow(channel);
 * }</pre>
 */
public final class ReadinessGate implements ClientInterceptor {

    private final long windowNanos;
    private final LongSupplier nanoClock;
    private final long createdNanos;
    private volatile boolean beenReady;

    /** @param window how long after the channel was made its calls may wait for a first replica */
    public ReadinessGate(Duration window) {
        this(window, System::nanoTime);
    }

    ReadinessGate(Duration window, LongSupplier nanoClock) {
        this.windowNanos = window.toNanos();
        this.nanoClock = nanoClock;
        this.createdNanos = nanoClock.getAsLong();
    }

    /** Follows {@code channel}'s state from now on. */
    public void follow(ManagedChannel channel) {
        update(channel.getState(false), channel);
    }

    private void update(ConnectivityState state, ManagedChannel channel) {
        if (state == ConnectivityState.READY) {
            beenReady = true; // for good: nothing more to follow
        } else if (state != ConnectivityState.SHUTDOWN) {
            channel.notifyWhenStateChanged(state, () -> update(channel.getState(false), channel));
        }
    }

    /** Whether calls made now wait for a replica. */
    public boolean waiting() {
        return !beenReady && nanoClock.getAsLong() - createdNanos < windowNanos;
    }

    @Override
    public <ReqT, RespT> ClientCall<ReqT, RespT> interceptCall(
            MethodDescriptor<ReqT, RespT> method, CallOptions options, Channel next) {
        if (!waiting() || options.isWaitForReady()) {
            return next.newCall(method, options);
        }
        return next.newCall(method, options.withWaitForReady());
    }
}
