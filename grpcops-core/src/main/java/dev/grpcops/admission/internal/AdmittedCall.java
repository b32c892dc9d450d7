package dev.grpcops.admission.internal;

import com.google.errorprone.annotations.concurrent.GuardedBy;
import dev.grpcops.admission.AdmissionRequest;
import dev.grpcops.admission.Caller;
import dev.grpcops.admission.RejectReason;
import dev.grpcops.admission.Rejection;
import dev.grpcops.admission.Ticket;
import dev.grpcops.budget.internal.CallLedger;
import dev.grpcops.internal.ContextAttachingListener;
import dev.grpcops.internal.Headers;
import dev.grpcops.internal.ServedSeat;
import io.grpc.Context;
import io.grpc.ForwardingServerCall;
import io.grpc.Metadata;
import io.grpc.ServerCall;
import io.grpc.ServerCallHandler;
import io.grpc.Status;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import java.util.function.LongSupplier;

/**
 * One served call as admission sees it. Its {@link #listener()} stands in for the handler's until
 * the call gets a seat: what the transport reports meanwhile (a cancel, mostly) is kept and
 * replayed in order once the handler has started, and the seat is released exactly once, when the
 * call completes or is cancelled.
 */
final class AdmittedCall<ReqT, RespT> implements AdmissionRequest {

    private final Caller caller;
    private final ServerCall<ReqT, RespT> call;
    private final Metadata headers;
    private final ServerCallHandler<ReqT, RespT> next;
    private final Context context;
    /** Whether the call's end is a sample of the adaptive limit, if it answers OK. */
    private final boolean sampled;

    private final long downstreamSetAsideNanos;
    /** One of the process's own warm-up calls. */
    private final boolean warmUp;

    /** Where a call that waited for its seat starts; null: on the thread that freed the seat. */
    private final Executor queuedStarts;

    /** The thread offering the call to admission, while it does: a start on it is the call's own, at once. */
    private volatile Thread offering;

    private final Deferred listener = new Deferred();
    /** Whether the handler answered OK: only then is the call's time a sample. */
    private volatile boolean answeredOk;
    /** Set by {@link #start} or by the interceptor once {@code offer} returns, whichever comes first. */
    private volatile Ticket ticket;

    AdmittedCall(
            Caller caller,
            ServerCall<ReqT, RespT> call,
            Metadata headers,
            ServerCallHandler<ReqT, RespT> next,
            Context context,
            LongSupplier nanoClock,
            boolean warmUp,
            boolean sampled,
            long downstreamSetAsideNanos,
            Executor queuedStarts) {
        this.caller = caller;
        this.queuedStarts = queuedStarts;
        this.warmUp = warmUp;
        this.sampled = sampled;
        this.downstreamSetAsideNanos = downstreamSetAsideNanos;
        this.call = call;
        this.headers = headers;
        this.next = next;
        // The seat is held until the call and every call it made downstream have ended. The time it
        // waited on them is not its own work: left out of a sample (a slower dependency is no
        // queueing here), and of the work a queued call is judged to need.
        this.context = ServedSeat.attach(context, nanoClock, this::freeSeat);
    }

    ServerCall.Listener<ReqT> listener() {
        return listener;
    }

    /** Admission is about to be offered the call on this thread. */
    void offering() {
        offering = Thread.currentThread();
    }

    void offered(Ticket ticket) {
        this.ticket = ticket;
        offering = null;
    }

    /** The call has ended: its seat is freed once its downstream calls have too. */
    private void release() {
        ServedSeat.current(context).ended();
    }

    private void freeSeat() {
        long waited = ServedSeat.current(context).waitedNanos();
        if (sampled && answeredOk) {
            ticket.release(waited);
        } else {
            ticket.releaseWithoutSample(waited);
        }
    }

    @Override
    public long downstreamSetAsideNanos() {
        return downstreamSetAsideNanos;
    }

    @Override
    public boolean warmUp() {
        return warmUp;
    }

    /**
     * The call was cancelled while it may still wait: its caller left, or its deadline passed (the
     * server cancels a call at its deadline), which its flow is not charged for.
     */
    private boolean cancel() {
        return context.cancellationCause() instanceof java.util.concurrent.TimeoutException
                ? ticket.deadlinePassed()
                : ticket.cancel();
    }

    @Override
    public String flowId() {
        return caller.id();
    }

    /**
     * The call has its seat. Seated at once, its handler starts here, on the transport's thread as
     * any call's does; seated later, on the server's executor when there is one (not on the thread
     * that freed the seat: another call's, or a client's event loop), else here.
     */
    @Override
    public void start(Ticket ticket) {
        this.ticket = ticket;
        if (queuedStarts != null && offering != Thread.currentThread()) {
            try {
                queuedStarts.execute(this::startHandler);
                return;
            } catch (RejectedExecutionException shutDown) {
                // The executor has stopped (the server is stopping): the call starts here instead.
            }
        }
        startHandler();
    }

    /**
     * Starts the handler. It may run on another call's thread, where no transport catches what the
     * handler throws: a failure ends the call {@code UNKNOWN} here, as grpc-java's ServerImpl would,
     * and frees the seat, whatever was thrown (an Error too), so no seat is ever lost.
     */
    private void startHandler() {
        ServerCall.Listener<ReqT> delegate;
        Context previous = context.attach();
        try {
            waitEnded();
            delegate = next.startCall(sampled ? new StatusSeen(call) : call, headers);
        } catch (Throwable e) {
            release();
            listener.ended();
            closeQuietly(e);
            return;
        } finally {
            context.detach(previous);
        }
        listener.started(delegate);
    }

    private void closeQuietly(Throwable failure) {
        try {
            call.close(
                    Status.UNKNOWN
                            .withDescription("Application error processing RPC")
                            .withCause(failure),
                    new Metadata());
        } catch (IllegalStateException alreadyClosed) {
            // The handler closed the call before it failed: nothing more to tell the client.
        }
    }

    /** Tells the call's budget ledger, if it has one, that its wait for a seat is over. */
    private void waitEnded() {
        CallLedger ledger = CallLedger.in(context);
        if (ledger != null) {
            ledger.waitEnded();
        }
    }

    @Override
    public void reject(Rejection rejection) {
        waitEnded();
        listener.ended();
        Metadata trailers = new Metadata();
        if (rejection.reason() == RejectReason.DRAINING) {
            call.close(Status.UNAVAILABLE.withDescription(rejection.describe()), trailers);
            return;
        }
        if (rejection.reason() == RejectReason.CANNOT_FINISH) {
            // No pushback: its budget, not this server's load, is what ran out.
            call.close(Status.DEADLINE_EXCEEDED.withDescription(rejection.describe()), trailers);
            return;
        }
        trailers.put(
                Headers.RETRY_PUSHBACK, Long.toString(rejection.retryAfter().toMillis()));
        call.close(Status.RESOURCE_EXHAUSTED.withDescription(rejection.describe()), trailers);
    }

    /** Notes whether the handler's answer was OK. */
    private final class StatusSeen extends ForwardingServerCall.SimpleForwardingServerCall<ReqT, RespT> {

        StatusSeen(ServerCall<ReqT, RespT> call) {
            super(call);
        }

        @Override
        public void close(Status status, Metadata trailers) {
            answeredOk = status.isOk();
            super.close(status, trailers);
        }
    }

    /** The listener the transport talks to; passes through once the handler's listener is there. */
    private final class Deferred extends ServerCall.Listener<ReqT> implements ContextAttachingListener {

        private ServerCall.Listener<ReqT> delegate;
        /** Events that arrived before the handler started; null once passing through. */
        @GuardedBy("this")
        private List<Runnable> pending;

        private volatile boolean passThrough;

        /** Every callback, replayed or passed through, and the handler's start run in the call's context. */
        @Override
        public Context attachedContext() {
            return context;
        }

        void started(ServerCall.Listener<ReqT> handler) {
            synchronized (this) {
                delegate = handler;
                if (pending == null) {
                    passThrough = true;
                    return;
                }
            }
            while (true) {
                List<Runnable> toRun;
                synchronized (this) {
                    if (pending.isEmpty()) {
                        pending = null;
                        passThrough = true;
                        return;
                    }
                    toRun = pending;
                    pending = new ArrayList<>();
                }
                toRun.forEach(this::replay);
            }
        }

        /**
         * Events replayed here run the handler on this thread, outside the transport's own error
         * handling: a handler that throws ends its call {@code UNKNOWN}, and the events after it
         * (the completion that frees the seat) are still delivered.
         */
        private void replay(Runnable event) {
            try {
                inContext(event);
            } catch (Throwable e) {
                closeQuietly(e);
            }
        }

        /** The call was rejected or failed to start: whatever the transport reports next goes nowhere. */
        void ended() {
            synchronized (this) {
                delegate = new ServerCall.Listener<>() {};
                pending = null;
                passThrough = true;
            }
        }

        // Once passing through (always, for a call that found a seat free), events go straight to
        // the handler's listener: no event object per call on the fast path.

        @Override
        public void onMessage(ReqT message) {
            if (passThrough) {
                Context previous = context.attach();
                try {
                    delegate.onMessage(message);
                } finally {
                    context.detach(previous);
                }
                return;
            }
            deliver(() -> delegate.onMessage(message));
        }

        @Override
        public void onHalfClose() {
            event(ServerCall.Listener::onHalfClose);
        }

        @Override
        public void onReady() {
            event(ServerCall.Listener::onReady);
        }

        /** A non-capturing method reference: nothing is allocated per call once passing through. */
        private void event(java.util.function.Consumer<ServerCall.Listener<ReqT>> event) {
            if (passThrough) {
                Context previous = context.attach();
                try {
                    event.accept(delegate);
                } finally {
                    context.detach(previous);
                }
                return;
            }
            deliver(() -> event.accept(delegate));
        }

        @Override
        public void onCancel() {
            if (!passThrough && cancel()) {
                return; // it left its queue; the handler never started
            }
            if (passThrough) {
                ended(false);
                return;
            }
            deliver(() -> ended(false));
        }

        @Override
        public void onComplete() {
            if (passThrough) {
                ended(true);
                return;
            }
            deliver(() -> ended(true));
        }

        /** The last event of every call: the handler hears of it, then the seat is free. */
        private void ended(boolean completed) {
            Context previous = context.attach();
            try {
                if (completed) {
                    delegate.onComplete();
                } else {
                    delegate.onCancel();
                }
            } finally {
                context.detach(previous);
                release();
            }
        }

        private void deliver(Runnable event) {
            if (!passThrough) {
                synchronized (this) {
                    if (!passThrough) {
                        if (pending == null) {
                            pending = new ArrayList<>(2);
                        }
                        pending.add(event);
                        return;
                    }
                }
            }
            inContext(event);
        }

        private void inContext(Runnable event) {
            Context previous = context.attach();
            try {
                event.run();
            } finally {
                context.detach(previous);
            }
        }
    }
}
