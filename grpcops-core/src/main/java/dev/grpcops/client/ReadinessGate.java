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
 * Lets the calls of one channel wait for a replica while the channel is just starting or
 * reconnecting, instead of failing at once with {@code UNAVAILABLE}: for {@code window} after the
 * channel was made, or after it lost its last ready replica, its calls are sent with gRPC's
 * wait-for-ready, so they wait within their own deadline. Past the window (a real outage) calls fail
 * fast again, so that callers learn of it and retry elsewhere. Costs a volatile read per call.
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
    /** Since when the channel has no ready replica; {@link Long#MIN_VALUE} while it has one. */
    private volatile long notReadySince;

    /** @param window how long calls wait for a replica after the channel was made or lost its last one */
    public ReadinessGate(Duration window) {
        this(window, System::nanoTime);
    }

    ReadinessGate(Duration window, LongSupplier nanoClock) {
        this.windowNanos = window.toNanos();
        this.nanoClock = nanoClock;
        this.notReadySince = nanoClock.getAsLong();
    }

    /** Follows {@code channel}'s state from now on. */
    public void follow(ManagedChannel channel) {
        update(channel.getState(false), channel);
    }

    private void update(ConnectivityState state, ManagedChannel channel) {
        if (state == ConnectivityState.SHUTDOWN) {
            return;
        }
        if (state == ConnectivityState.READY) {
            notReadySince = Long.MIN_VALUE;
        } else if (notReadySince == Long.MIN_VALUE) {
            notReadySince = nanoClock.getAsLong();
        }
        channel.notifyWhenStateChanged(state, () -> update(channel.getState(false), channel));
    }

    /** Whether calls made now wait for a replica. */
    public boolean waiting() {
        long since = notReadySince;
        return since != Long.MIN_VALUE && nanoClock.getAsLong() - since < windowNanos;
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
