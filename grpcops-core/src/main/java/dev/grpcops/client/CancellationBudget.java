package dev.grpcops.client;

import com.google.common.util.concurrent.MoreExecutors;
import com.google.errorprone.annotations.concurrent.GuardedBy;
import dev.grpcops.internal.ServedSeat;
import dev.grpcops.internal.SharedScheduler;
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
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.LongSupplier;

/**
 * Keeps a channel's cancellations under what its downstream's rapid-reset guard allows, so that a
 * caller cancelling fan-outs as fast as it can never makes the downstream close the connection it
 * shares with every other caller (SPEC §16; {@code GOAWAY ENHANCE_YOUR_CALM} after too many
 * {@code RST_STREAM} frames a second, the defence against HTTP/2 rapid reset).
 *
 * <p>A call is made outside its caller's cancellation (in a fork of the caller's context that keeps
 * its values and its deadline). When the caller cancels, or the application cancels the call, the
 * call ends for the application at once ({@code CANCELLED}), and is cancelled downstream (an
 * {@code RST_STREAM}) while the budget has room: {@code perSecond} a second, {@code burst} at once.
 * Past it, the cancellation is deferred: sent in turn as the budget refills, unless the call ends
 * downstream first (by its answer or its deadline). The downstream meanwhile does the work of a call
 * nobody waits for, which costs far less than a connection closed under every caller's calls.
 * That work stays the caller's: a call made while serving one that admission seated holds that
 * seat until it has ended downstream, so that a caller cancelling fan-outs is held to its share of
 * seats by the work it left running, not only by the calls it has open.
 *
 * <pre>{@code
 * ManagedChannelBuilder.forTarget(...).intercept(CancellationBudget.builder().perSecond(1000).build());
 * }</pre>
 * Install one per channel: the budget is the channel's, shared by its connections.
 *
 * <p>One class over 400 lines: the interceptor, the call it wraps and the listener downstream share
 * one budget and the cancellations it holds back, nested so that no other file sees them.
 */
public final class CancellationBudget implements ClientInterceptor {

    /** Half of the grpcops server's default guard (2000 a second per connection), the rest for burst. */
    public static final int DEFAULT_PER_SECOND = 1000;

    public static final int DEFAULT_BURST = 500;

    private final double perNano;
    private final double burst;
    private final LongSupplier nanoClock;
    private final CancellationListener listener;

    private final ScheduledExecutorService scheduler;

    private final Object lock = new Object();

    @GuardedBy("lock")
    private double tokens;

    @GuardedBy("lock")
    private long refilledAt;

    /** Calls whose cancellation waits for room in the budget, oldest first. */
    @GuardedBy("lock")
    private final ArrayDeque<BudgetedCall<?, ?>> deferred = new ArrayDeque<>();

    @GuardedBy("lock")
    private boolean drainScheduled;

    /** What became of a cancellation (the {@code outcome} of the starter's metric). */
    public enum Outcome {
        /** Sent downstream at once. */
        SENT,
        /** Over the budget: deferred, the call ended for its caller at once. */
        DEFERRED,
        /** A deferred cancellation sent as the budget refilled (the others ended downstream first). */
        SENT_LATER
    }

    /** Told of every cancellation and of every deferred one sent later. Called with no lock held. */
    @FunctionalInterface
    public interface CancellationListener {
        CancellationListener NONE = outcome -> {};

        void cancelled(Outcome outcome);
    }

    private CancellationBudget(Builder builder) {
        this.perNano = builder.perSecond / 1e9;
        this.burst = builder.burst;
        this.nanoClock = builder.nanoClock;
        this.listener = builder.listener;
        this.scheduler = builder.scheduler;
        synchronized (lock) {
            this.tokens = builder.burst;
            this.refilledAt = builder.nanoClock.getAsLong();
        }
    }

    public static Builder builder() {
        return new Builder();
    }

    /** Takes one cancellation from the budget if there is room and none is waiting before it. */
    boolean tryAcquire() {
        synchronized (lock) {
            refill();
            if (tokens >= 1 && deferred.isEmpty()) {
                tokens -= 1;
                return true;
            }
            return false;
        }
    }

    @GuardedBy("lock")
    private void refill() {
        long now = nanoClock.getAsLong();
        tokens = Math.min(burst, tokens + (now - refilledAt) * perNano);
        refilledAt = now;
    }

    /** Deferred cancellations still to be sent: of calls that have not ended downstream yet. */
    public int waiting() {
        synchronized (lock) {
            int waiting = 0;
            for (BudgetedCall<?, ?> call : deferred) {
                if (!call.endedDownstream) {
                    waiting++;
                }
            }
            return waiting;
        }
    }

    /** Queues {@code call}'s cancellation until the budget has room for it. */
    private void defer(BudgetedCall<?, ?> call) {
        synchronized (lock) {
            deferred.add(call);
            if (!drainScheduled) {
                drainScheduled = true;
                scheduleDrain();
            }
        }
    }

    @GuardedBy("lock")
    private void scheduleDrain() {
        long untilToken = (long) Math.ceil((1 - tokens) / perNano);
        scheduler.schedule(this::drain, Math.max(TimeUnit.MILLISECONDS.toNanos(1), untilToken), TimeUnit.NANOSECONDS);
    }

    /** Sends the deferred cancellations the budget has room for now, oldest first. */
    private void drain() {
        List<BudgetedCall<?, ?>> due = new ArrayList<>();
        synchronized (lock) {
            refill();
            while (!deferred.isEmpty()) {
                if (deferred.peek().endedDownstream) {
                    deferred.poll(); // answered or past its deadline meanwhile: nothing to send
                } else if (tokens >= 1) {
                    tokens -= 1;
                    due.add(deferred.poll());
                } else {
                    break;
                }
            }
            drainScheduled = !deferred.isEmpty();
            if (drainScheduled) {
                scheduleDrain();
            }
        }
        for (BudgetedCall<?, ?> call : due) {
            call.sendCancel();
            listener.cancelled(Outcome.SENT_LATER);
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
     * budget. The application hears the call end at once ({@code CANCELLED}) either way; what the
     * downstream answers later goes nowhere.
     */
    private final class BudgetedCall<ReqT, RespT> extends ForwardingClientCall.SimpleForwardingClientCall<ReqT, RespT>
            implements Context.CancellationListener {

        private final Context caller;
        private final Object lock = new Object();

        @GuardedBy("lock")
        private Listener<RespT> application;

        /** The application has heard the call end: from the downstream, or from its cancellation. */
        @GuardedBy("lock")
        private boolean closed;

        /** The downstream ended the call: a deferred cancellation has nothing left to cancel. */
        volatile boolean endedDownstream;

        private volatile String cancelMessage;
        private volatile Throwable cancelCause;

        /** The served call's count this call holds open, if any; ended once. */
        private final AtomicReference<ServedSeat> work = new AtomicReference<>();

        BudgetedCall(ClientCall<ReqT, RespT> delegate, Context caller) {
            super(delegate);
            this.caller = caller;
        }

        @Override
        public void start(Listener<RespT> listener, Metadata headers) {
            synchronized (lock) {
                application = listener;
            }
            ServedSeat served = ServedSeat.current(caller);
            if (served != null && served.started()) {
                work.set(served); // the served call's seat is held until this call has ended downstream
            }
            try {
                super.start(new Downstream(), headers);
            } catch (RuntimeException | Error e) {
                endWork();
                throw e;
            }
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
            Listener<RespT> toClose = null;
            boolean sent = false;
            synchronized (lock) {
                if (closed || application == null) {
                    // ended already, or not started: nothing goes downstream anyway
                } else if (tryAcquire()) {
                    sent = true;
                } else {
                    closed = true;
                    toClose = application;
                }
            }
            if (toClose == null) {
                if (sent) {
                    listener.cancelled(Outcome.SENT);
                }
                super.cancel(message, cause);
                return;
            }
            caller.removeListener(this);
            cancelMessage = message;
            cancelCause = cause;
            defer(this);
            listener.cancelled(Outcome.DEFERRED);
            toClose.onClose(Status.CANCELLED.withDescription(message).withCause(cause), new Metadata());
        }

        private void endWork() {
            ServedSeat held = work.getAndSet(null);
            if (held != null) {
                held.endedDownstream();
            }
        }

        /** The deferred cancellation, now within the budget. */
        void sendCancel() {
            delegate().cancel(cancelMessage, cancelCause);
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
                endedDownstream = true;
                endWork();
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
        private ScheduledExecutorService scheduler = SharedScheduler.get();
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

        /** Sends the deferred cancellations as the budget refills; the library's shared scheduler by default. */
        public Builder scheduler(ScheduledExecutorService scheduler) {
            this.scheduler = Objects.requireNonNull(scheduler, "scheduler");
            return this;
        }

        /** Told of every cancellation, sent, deferred or sent later (metrics); nothing by default. */
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
