package dev.grpcops.client;

import com.google.common.util.concurrent.MoreExecutors;
import com.google.errorprone.annotations.concurrent.GuardedBy;
import dev.grpcops.admission.Caller;
import dev.grpcops.internal.RateLimitedLog;
import dev.grpcops.internal.ServedSeat;
import dev.grpcops.internal.SharedScheduler;
import io.grpc.CallOptions;
import io.grpc.Channel;
import io.grpc.ClientCall;
import io.grpc.ClientInterceptor;
import io.grpc.ConnectivityState;
import io.grpc.Context;
import io.grpc.Deadline;
import io.grpc.ForwardingClientCall;
import io.grpc.ManagedChannel;
import io.grpc.Metadata;
import io.grpc.MethodDescriptor;
import io.grpc.Status;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.LongSupplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Keeps a channel's cancellations under what its downstream's rapid-reset guard allows, so that a
 * caller cancelling fan-outs as fast as it can never makes the downstream close the connection it
 * shares with every other caller (design §16; {@code GOAWAY ENHANCE_YOUR_CALM} after too many
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
 * <p>Nothing goes downstream for a caller that has already left: a call started after its caller
 * was cancelled is never sent, and a call that has no stream on a connection yet (held while the
 * channel connects, or at the {@link ReadinessGate}) is cancelled where it is, spending nothing of
 * the budget ({@link Outcome#LOCAL}). Deferred cancellations wait per caller and are sent in turn,
 * one caller at a time, so that one caller's backlog does not hold back another's (a hedge that lost,
 * say); at most {@code maxDeferred} wait, and beyond that the longest backlog gives up its oldest
 * ({@link Outcome#DROPPED}: that call ends downstream by itself, at its deadline). What the listener
 * throws is logged, never the call's.
 *
 * <pre>{@code
 * CancellationBudget budget = CancellationBudget.builder().perSecond(1000).build();
 * ManagedChannel channel = ManagedChannelBuilder.forTarget(...).intercept(budget).build();
 * budget.follow(channel);
 * }</pre>
 * Install one per channel: the budget is the channel's, shared by its connections.
 *
 * <p>The interceptor, the call it wraps and the listener downstream share one budget and the
 * cancellations it holds back: they are nested so that no other file sees them.
 */
public final class CancellationBudget implements ClientInterceptor {

    private static final Logger log = LoggerFactory.getLogger(CancellationBudget.class);
    /** The flow of calls made outside any served call, or where admission named no caller. */
    private static final String NO_CALLER = "";

    private final double perSecond;
    private final double perNano;
    private final double burst;
    private final int maxDeferred;
    private final LongSupplier nanoClock;
    private final CancellationListener listener;
    private final RateLimitedLog listenerFailures = new RateLimitedLog(log, Duration.ofSeconds(10));

    private final ScheduledExecutorService scheduler;

    /** The channel whose calls this budget holds, once {@link #follow}ed: its state says whether a call can be on a connection. */
    private volatile ManagedChannel channel;

    private final Object lock = new Object();

    @GuardedBy("lock")
    private double tokens;

    @GuardedBy("lock")
    private long refilledAt;

    /** Calls whose cancellation waits for room in the budget, oldest first, per caller. */
    @GuardedBy("lock")
    private final Map<String, ArrayDeque<BudgetedCall<?, ?>>> deferred = new HashMap<>();

    /** The callers with cancellations waiting, in the order they are served: one each in turn. */
    @GuardedBy("lock")
    private final ArrayDeque<String> turns = new ArrayDeque<>();

    @GuardedBy("lock")
    private int deferredCount;

    @GuardedBy("lock")
    private boolean drainScheduled;

    /** What became of a cancellation (the {@code outcome} of the starter's metric). */
    public enum Outcome {
        /** Sent downstream at once. */
        SENT,
        /** Over the budget: deferred, the call ended for its caller at once. */
        DEFERRED,
        /** A deferred cancellation sent as the budget refilled (the others ended downstream first). */
        SENT_LATER,
        /**
         * The call had no stream on a connection yet (its caller left before it was sent, or it was
         * held while the channel had no ready connection): ended where it was, nothing sent.
         */
        LOCAL,
        /**
         * A deferred cancellation given up because {@code maxDeferred} were waiting (the oldest of the
         * longest backlog): the call ends downstream by itself, at its deadline.
         */
        DROPPED
    }

    /** Told of every cancellation and of every deferred one sent later. Called with no lock held. */
    @FunctionalInterface
    public interface CancellationListener {
        CancellationListener NONE = outcome -> {};

        void cancelled(Outcome outcome);
    }

    private CancellationBudget(Builder builder) {
        this.perSecond = builder.perSecond;
        this.perNano = builder.perSecond / 1e9;
        this.burst = builder.burst;
        this.maxDeferred = builder.maxDeferred > 0 ? builder.maxDeferred : (int) Math.max(1, 5 * builder.perSecond);
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

    /** A builder for another budget like this one (for another channel): the same settings, none of the state. */
    public Builder toBuilder() {
        return builder()
                .perSecond(perSecond)
                .burst(burst)
                .maxDeferred(maxDeferred)
                .nanoClock(nanoClock)
                .scheduler(scheduler)
                .listener(listener);
    }

    /** Cancellations sent downstream a second. */
    public double perSecond() {
        return perSecond;
    }

    /** Cancellations sent at once, from a budget that has been idle. */
    public double burst() {
        return burst;
    }

    /**
     * The channel this budget is installed on: while it has no ready connection, a cancelled call
     * cannot be on one, and its cancellation is free ({@link Outcome#LOCAL}). Without it, every
     * cancellation counts against the budget.
     */
    public void follow(ManagedChannel channel) {
        this.channel = Objects.requireNonNull(channel, "channel");
    }

    /** Whether no call of the channel can be on a ready connection now (only known once followed). */
    private boolean noReadyConnection() {
        ManagedChannel followed = channel;
        return followed != null && followed.getState(false) != ConnectivityState.READY;
    }

    /** Takes one cancellation from the budget if there is room and none is waiting before it. */
    boolean tryAcquire() {
        synchronized (lock) {
            refill();
            if (tokens >= 1 && deferredCount == 0) {
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
            for (ArrayDeque<BudgetedCall<?, ?>> calls : deferred.values()) {
                for (BudgetedCall<?, ?> call : calls) {
                    if (!call.endedDownstream) {
                        waiting++;
                    }
                }
            }
            return waiting;
        }
    }

    /**
     * Queues {@code call}'s cancellation, behind its caller's others, until the budget has room for
     * it. Returns false when no timer could be had to send it later (the scheduler has shut down):
     * then it is the caller's to send now.
     */
    private boolean defer(BudgetedCall<?, ?> call) {
        BudgetedCall<?, ?> dropped = null;
        String flow = call.flow();
        synchronized (lock) {
            if (!drainScheduled) {
                try {
                    scheduleDrain();
                } catch (RejectedExecutionException shutDown) {
                    return false;
                }
                drainScheduled = true;
            }
            ArrayDeque<BudgetedCall<?, ?>> calls = deferred.get(flow);
            if (calls == null) {
                calls = new ArrayDeque<>();
                deferred.put(flow, calls);
                turns.add(flow);
            }
            calls.add(call);
            if (++deferredCount > maxDeferred) {
                dropped = dropOldestOfLongest();
            }
        }
        if (dropped != null) {
            tell(Outcome.DROPPED);
        }
        return true;
    }

    /** The oldest deferred cancellation of the caller with the most: given up, so that at most maxDeferred wait. */
    @GuardedBy("lock")
    private BudgetedCall<?, ?> dropOldestOfLongest() {
        String longest = null;
        int most = 0;
        for (Map.Entry<String, ArrayDeque<BudgetedCall<?, ?>>> entry : deferred.entrySet()) {
            if (entry.getValue().size() > most) {
                most = entry.getValue().size();
                longest = entry.getKey();
            }
        }
        return pollFrom(longest);
    }

    /** The oldest deferred call of {@code flow}, taken off its queue; the flow leaves its turn once empty. */
    @GuardedBy("lock")
    private BudgetedCall<?, ?> pollFrom(String flow) {
        ArrayDeque<BudgetedCall<?, ?>> calls = deferred.get(flow);
        BudgetedCall<?, ?> oldest = calls.poll();
        deferredCount--;
        if (calls.isEmpty()) {
            deferred.remove(flow);
            turns.remove(flow);
        }
        return oldest;
    }

    @GuardedBy("lock")
    private void scheduleDrain() {
        long untilToken = (long) Math.ceil((1 - tokens) / perNano);
        scheduler.schedule(this::drain, Math.max(TimeUnit.MILLISECONDS.toNanos(1), untilToken), TimeUnit.NANOSECONDS);
    }

    /**
     * Sends the deferred cancellations the budget has room for now: one caller's oldest at a time,
     * the callers in turn. One whose call has ended downstream meanwhile needs nothing sent.
     */
    private void drain() {
        List<BudgetedCall<?, ?>> due = new ArrayList<>();
        boolean rescheduled = true;
        synchronized (lock) {
            refill();
            while (!turns.isEmpty() && tokens >= 1) {
                String flow = turns.poll();
                ArrayDeque<BudgetedCall<?, ?>> calls = deferred.get(flow);
                BudgetedCall<?, ?> next;
                // Those answered or past their deadline meanwhile need nothing sent.
                while ((next = calls.poll()) != null) {
                    deferredCount--;
                    if (!next.endedDownstream) {
                        break;
                    }
                }
                if (next != null) {
                    tokens -= 1;
                    due.add(next);
                }
                if (calls.isEmpty()) {
                    deferred.remove(flow);
                } else {
                    turns.add(flow);
                }
            }
            drainScheduled = deferredCount > 0;
            if (drainScheduled) {
                try {
                    scheduleDrain();
                } catch (RejectedExecutionException shutDown) {
                    rescheduled = false;
                    drainScheduled = false;
                }
            }
            if (!rescheduled) {
                // No timer any more (shutting down): what still waits goes now rather than never.
                for (ArrayDeque<BudgetedCall<?, ?>> calls : deferred.values()) {
                    due.addAll(calls);
                }
                deferred.clear();
                turns.clear();
                deferredCount = 0;
            }
        }
        for (BudgetedCall<?, ?> call : due) {
            call.sendCancel();
            tell(Outcome.SENT_LATER);
        }
    }

    /** The listener is told; what it throws is logged and never changes what the call does. */
    private void tell(Outcome outcome) {
        try {
            listener.cancelled(outcome);
        } catch (Throwable e) {
            listenerFailures.warn("cancellations: the cancellation listener failed (the call goes on): " + e);
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

        /** Never started downstream (its caller had left): nothing to pass on. */
        private volatile boolean notSent;

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

        /** Whose backlog a deferred cancellation of this call waits in: the served call's caller. */
        String flow() {
            Caller served = Caller.in(caller);
            return served == null ? NO_CALLER : served.id();
        }

        @Override
        public void start(Listener<RespT> listener, Metadata headers) {
            if (caller.isCancelled()) {
                // The caller left before the call went out (grpc-java's own check would have seen it
                // in the caller's context, not in the fork the call is made in): it is never sent.
                notSent = true;
                synchronized (lock) {
                    closed = true;
                }
                tell(Outcome.LOCAL);
                listener.onClose(
                        Status.CANCELLED
                                .withDescription("the caller cancelled before the call was sent")
                                .withCause(caller.cancellationCause()),
                        new Metadata());
                return;
            }
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
            // Fires at once if the caller has left meanwhile.
            caller.addListener(this, MoreExecutors.directExecutor());
        }

        @Override
        public void request(int numMessages) {
            if (!notSent) {
                super.request(numMessages);
            }
        }

        @Override
        public void sendMessage(ReqT message) {
            if (!notSent) {
                super.sendMessage(message);
            }
        }

        @Override
        public void halfClose() {
            if (!notSent) {
                super.halfClose();
            }
        }

        /** The caller's context was cancelled (it left, or its deadline passed). */
        @Override
        public void cancelled(Context context) {
            cancel("the caller cancelled", context.cancellationCause());
        }

        @Override
        public void cancel(String message, Throwable cause) {
            if (notSent) {
                return;
            }
            Listener<RespT> toClose = null;
            Outcome outcome = null;
            synchronized (lock) {
                if (closed || application == null) {
                    // ended already, or not started: nothing goes downstream anyway
                } else if (noReadyConnection()) {
                    outcome = Outcome.LOCAL; // no ready connection it could be on: nothing to reset
                } else if (tryAcquire()) {
                    outcome = Outcome.SENT;
                } else {
                    closed = true;
                    toClose = application;
                }
            }
            if (toClose == null) {
                if (outcome != null) {
                    tell(outcome);
                }
                super.cancel(message, cause);
                return;
            }
            caller.removeListener(this);
            cancelMessage = message;
            cancelCause = cause;
            if (defer(this)) {
                tell(Outcome.DEFERRED);
            } else {
                tell(Outcome.SENT);
                sendCancel();
            }
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

    /** The budget's size and clock: 1000 a second (half the grpcops server's guard), 500 at once, by default. */
    public static final class Builder {

        private double perSecond = 1000;
        private double burst = 500;
        private int maxDeferred;
        private LongSupplier nanoClock = System::nanoTime;
        private ScheduledExecutorService scheduler = SharedScheduler.get();
        private CancellationListener listener = CancellationListener.NONE;

        private Builder() {}

        /**
         * Cancellations sent downstream a second; with {@link #burst} at most {@code burst + perSecond}
         * in any second, which must stay under the downstream's guard (the grpcops server's:
         * {@code max-rst-frames}, 2000 a second per connection); 1000 by default.
         */
        public Builder perSecond(double perSecond) {
            if (!(perSecond > 0)) {
                throw new IllegalArgumentException("cancellations per second must be positive, got " + perSecond);
            }
            this.perSecond = perSecond;
            return this;
        }

        /** Cancellations sent at once, from a budget that has been idle; 500 by default. */
        public Builder burst(double burst) {
            if (!(burst >= 1)) {
                throw new IllegalArgumentException("cancellation burst must be at least 1, got " + burst);
            }
            this.burst = burst;
            return this;
        }

        /**
         * The most cancellations deferred at once; beyond, the longest backlog gives up its oldest
         * ({@link Outcome#DROPPED}). Five seconds of the budget by default ({@code 5 × perSecond}).
         */
        public Builder maxDeferred(int maxDeferred) {
            if (maxDeferred < 1) {
                throw new IllegalArgumentException("max deferred cancellations must be at least 1, got " + maxDeferred);
            }
            this.maxDeferred = maxDeferred;
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
