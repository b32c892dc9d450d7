package dev.grpcops.client;

import com.google.common.util.concurrent.MoreExecutors;
import com.google.errorprone.annotations.concurrent.GuardedBy;
import io.grpc.CallOptions;
import io.grpc.Channel;
import io.grpc.ClientCall;
import io.grpc.ClientInterceptor;
import io.grpc.Context;
import io.grpc.Deadline;
import io.grpc.ForwardingClientCall;
import io.grpc.Metadata;
import io.grpc.MethodDescriptor;
import io.grpc.Status;
import java.util.Objects;
import java.util.function.LongSupplier;

/**
 * Keeps a channel's cancellations under what its downstream's rapid-reset guard allows, so that a
 * caller cancelling fan-outs as fast as it can never makes the downstream close the connection it
 * shares with every other caller (SPEC §16; {@code GOAWAY ENHANCE_YOUR_CALM} after too many
 * {@code RST_STREAM} frames a second, the defence against HTTP/2 rapid reset).
 *
 * <p>A call is made outside its caller's cancellation (in a fork of the caller's context that keeps
 * its values and its deadline). When the caller cancels, or the application cancels the call, the
 * call is cancelled downstream (an {@code RST_STREAM}) while the budget has room: {@code perSecond}
 * a second, {@code burst} at once. Past it, the call is left to end by itself, by its answer or its
 * deadline: the downstream does the work of a call nobody waits for, which costs far less than a
 * connection closed under every caller's calls. The caller sees no difference either way.
 *
 * <pre>{@code
 * ManagedChannelBuilder.forTarget(...).intercept(CancellationBudget.builder().perSecond(1000).build());
 * }</pre>
 * Install one per channel: the budget is the channel's, shared by its connections.
 */
public final class CancellationBudget implements ClientInterceptor {

    /** Half of the grpcops server's default guard (2000 a second per connection), the rest for burst. */
    public static final int DEFAULT_PER_SECOND = 1000;

    public static final int DEFAULT_BURST = 500;

    private final double perNano;
    private final double burst;
    private final LongSupplier nanoClock;
    private final CancellationListener listener;

    private final Object lock = new Object();
    private double tokens;
    private long refilledAt;

    /** Told of every cancellation: sent downstream, or withheld (left to end by itself). */
    public interface CancellationListener {
        CancellationListener NONE = sent -> {};

        void cancelled(boolean sent);
    }

    private CancellationBudget(Builder builder) {
        this.perNano = builder.perSecond / 1e9;
        this.burst = builder.burst;
        this.nanoClock = builder.nanoClock;
        this.listener = builder.listener;
        this.tokens = builder.burst;
        this.refilledAt = builder.nanoClock.getAsLong();
    }

    public static Builder builder() {
        return new Builder();
    }

    /** Takes one cancellation from the budget if there is room. */
    boolean tryAcquire() {
        synchronized (lock) {
            long now = nanoClock.getAsLong();
            tokens = Math.min(burst, tokens + (now - refilledAt) * perNano);
            refilledAt = now;
            if (tokens >= 1) {
                tokens -= 1;
                return true;
            }
            return false;
        }
    }

    @Override
    public <ReqT, RespT> ClientCall<ReqT, RespT> interceptCall(
            MethodDescriptor<ReqT, RespT> method, CallOptions options, Channel next) {
        Context caller = Context.current();
        Deadline deadline = caller.getDeadline();
        CallOptions kept = deadline == null
                        || (options.getDeadline() != null
                                && options.getDeadline().isBefore(deadline))
                ? options
                : options.withDeadline(deadline);
        // The call lives in a context the caller's cancellation does not reach: this class cancels it.
        Context detached = caller.fork();
        Context previous = detached.attach();
        ClientCall<ReqT, RespT> call;
        try {
            call = next.newCall(method, kept);
        } finally {
            detached.detach(previous);
        }
        return new BudgetedCall<>(call, caller);
    }

    /**
     * A call whose cancellations, the caller's or the application's, go downstream only within the
     * budget. A withheld one ends for the application at once, as a sent one would ({@code CANCELLED});
     * what the downstream answers later goes nowhere.
     */
    private final class BudgetedCall<ReqT, RespT> extends ForwardingClientCall.SimpleForwardingClientCall<ReqT, RespT>
            implements Context.CancellationListener {

        private final Context caller;
        private final Object lock = new Object();

        @GuardedBy("lock")
        private Listener<RespT> application;

        /** The application has heard the call end: from the downstream, or a withheld cancellation. */
        @GuardedBy("lock")
        private boolean closed;

        BudgetedCall(ClientCall<ReqT, RespT> delegate, Context caller) {
            super(delegate);
            this.caller = caller;
        }

        @Override
        public void start(Listener<RespT> listener, Metadata headers) {
            synchronized (lock) {
                application = listener;
            }
            super.start(new Downstream(), headers);
            if (caller.isCancelled()) {
                cancelled(caller);
            } else {
                caller.addListener(this, MoreExecutors.directExecutor());
            }
        }

        /** The caller's context was cancelled (it left, or its deadline passed). */
        @Override
        public void cancelled(Context context) {
            cancel("the caller cancelled", context.cancellationCause());
        }

        @Override
        public void cancel(String message, Throwable cause) {
            Listener<RespT> toClose;
            synchronized (lock) {
                if (closed || application == null) {
                    toClose = null; // ended already, or not started: nothing goes downstream anyway
                } else if (tryAcquire()) {
                    toClose = null;
                    listener.cancelled(true);
                } else {
                    listener.cancelled(false);
                    closed = true;
                    toClose = application;
                }
            }
            if (toClose == null) {
                super.cancel(message, cause);
                return;
            }
            caller.removeListener(this);
            toClose.onClose(Status.CANCELLED.withDescription(message).withCause(cause), new Metadata());
        }

        /** What the downstream says, passed on unless the application has heard the call end already. */
        private final class Downstream extends Listener<RespT> {

            @Override
            public void onHeaders(Metadata headers) {
                synchronized (lock) {
                    if (!closed) {
                        application.onHeaders(headers);
                    }
                }
            }

            @Override
            public void onMessage(RespT message) {
                synchronized (lock) {
                    if (!closed) {
                        application.onMessage(message);
                    }
                }
            }

            @Override
            public void onReady() {
                synchronized (lock) {
                    if (!closed) {
                        application.onReady();
                    }
                }
            }

            @Override
            public void onClose(Status status, Metadata trailers) {
                caller.removeListener(BudgetedCall.this);
                synchronized (lock) {
                    if (closed) {
                        return;
                    }
                    closed = true;
                    application.onClose(status, trailers);
                }
            }
        }
    }

    /** The budget's size and clock; {@link #DEFAULT_PER_SECOND} and {@link #DEFAULT_BURST} by default. */
    public static final class Builder {

        private double perSecond = DEFAULT_PER_SECOND;
        private double burst = DEFAULT_BURST;
        private LongSupplier nanoClock = System::nanoTime;
        private CancellationListener listener = CancellationListener.NONE;

        private Builder() {}

        /**
         * Cancellations sent downstream a second; with {@link #burst} at most {@code burst + perSecond}
         * in any second, which must stay under the downstream's guard (the grpcops server's:
         * {@code max-rst-frames}, 2000 a second per connection).
         */
        public Builder perSecond(double perSecond) {
            if (!(perSecond > 0)) {
                throw new IllegalArgumentException("cancellations per second must be positive, got " + perSecond);
            }
            this.perSecond = perSecond;
            return this;
        }

        /** Cancellations sent at once, from a budget that has been idle. */
        public Builder burst(double burst) {
            if (!(burst >= 1)) {
                throw new IllegalArgumentException("cancellation burst must be at least 1, got " + burst);
            }
            this.burst = burst;
            return this;
        }

        /** Told of every cancellation, sent or withheld (metrics); nothing by default. */
        public Builder listener(CancellationListener listener) {
            this.listener = Objects.requireNonNull(listener, "listener");
            return this;
        }

        /** A monotonic clock in nanoseconds; {@link System#nanoTime} by default (tests give a fake one). */
        public Builder nanoClock(LongSupplier nanoClock) {
            this.nanoClock = Objects.requireNonNull(nanoClock, "nanoClock");
            return this;
        }

        /** For one channel: its budget is shared by its connections. */
        public CancellationBudget build() {
            return new CancellationBudget(this);
        }
    }
}
