package dev.grpcops.admission.internal;

import dev.grpcops.admission.Admission;
import dev.grpcops.admission.AdmissionRequest;
import dev.grpcops.admission.Caller;
import dev.grpcops.admission.RejectReason;
import dev.grpcops.admission.Rejection;
import io.grpc.Context;
import io.grpc.Metadata;
import io.grpc.ServerCall;
import io.grpc.ServerCallHandler;
import io.grpc.Status;
import java.util.ArrayList;
import java.util.List;

/**
 * One served call as admission sees it. Its {@link #listener()} stands in for the handler's until
 * the call gets a seat: what the transport reports meanwhile (a cancel, mostly) is kept and
 * replayed in order once the handler has started, and the seat is released exactly once, when the
 * call completes or is cancelled.
 */
final class AdmittedCall<ReqT, RespT> extends AdmissionRequest {

    static final Metadata.Key<String> PUSHBACK = Metadata.Key.of("grpc-retry-pushback-ms", Metadata.ASCII_STRING_MARSHALLER);

    private final Caller caller;
    private final ServerCall<ReqT, RespT> call;
    private final Metadata headers;
    private final ServerCallHandler<ReqT, RespT> next;
    private final Context context;
    private final Deferred listener = new Deferred();
    /** True while offered on the transport's own thread: a failure to start then goes to the transport as usual. */
    private boolean offering;

    AdmittedCall(Admission.Level level, long allowanceNanos, Caller caller, ServerCall<ReqT, RespT> call,
            Metadata headers, ServerCallHandler<ReqT, RespT> next, Context context) {
        super(level, allowanceNanos);
        this.caller = caller;
        this.call = call;
        this.headers = headers;
        this.next = next;
        this.context = context;
    }

    void offerTo(Admission admission) {
        offering = true;
        try {
            admission.offer(this);
        } finally {
            offering = false;
        }
    }

    ServerCall.Listener<ReqT> listener() {
        return listener;
    }

    @Override
    protected String flowId() {
        return caller.id();
    }

    @Override
    protected void start() {
        ServerCall.Listener<ReqT> delegate;
        Context previous = context.attach();
        try {
            delegate = next.startCall(call, headers);
        } catch (RuntimeException e) {
            release();
            if (offering) {
                throw e;
            }
            listener.ended();
            call.close(Status.UNKNOWN.withDescription("the call failed to start").withCause(e), new Metadata());
            return;
        } finally {
            context.detach(previous);
        }
        listener.started(delegate);
    }

    @Override
    protected void reject(Rejection rejection) {
        listener.ended();
        Metadata trailers = new Metadata();
        if (rejection.reason() == RejectReason.DRAINING) {
            call.close(Status.UNAVAILABLE.withDescription(rejection.describe()), trailers);
            return;
        }
        trailers.put(PUSHBACK, Long.toString(rejection.retryAfter().toMillis()));
        call.close(Status.RESOURCE_EXHAUSTED.withDescription(rejection.describe()), trailers);
    }

    /** The listener the transport talks to; passes through once the handler's listener is there. */
    private final class Deferred extends ServerCall.Listener<ReqT> {

        private ServerCall.Listener<ReqT> delegate;
        /** Events that arrived before the handler started; null once passing through. */
        private List<Runnable> pending;
        private volatile boolean passThrough;

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
                toRun.forEach(this::inContext);
            }
        }

        /** The call was rejected or failed to start: whatever the transport reports next goes nowhere. */
        void ended() {
            synchronized (this) {
                delegate = new ServerCall.Listener<>() {
                };
                pending = null;
                passThrough = true;
            }
        }

        @Override
        public void onMessage(ReqT message) {
            deliver(() -> delegate.onMessage(message));
        }

        @Override
        public void onHalfClose() {
            deliver(() -> delegate.onHalfClose());
        }

        @Override
        public void onReady() {
            deliver(() -> delegate.onReady());
        }

        @Override
        public void onCancel() {
            if (!passThrough && cancel()) {
                return; // it left its queue; the handler never started
            }
            deliver(() -> {
                try {
                    delegate.onCancel();
                } finally {
                    release();
                }
            });
        }

        @Override
        public void onComplete() {
            deliver(() -> {
                try {
                    delegate.onComplete();
                } finally {
                    release();
                }
            });
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
