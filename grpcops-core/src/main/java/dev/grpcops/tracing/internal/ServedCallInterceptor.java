package dev.grpcops.tracing.internal;

import dev.grpcops.internal.ContextAttachingListener;
import dev.grpcops.internal.WarmUpMark;
import io.grpc.Context;
import io.grpc.ForwardingServerCall;
import io.grpc.ForwardingServerCallListener;
import io.grpc.Metadata;
import io.grpc.MethodDescriptor;
import io.grpc.ServerCall;
import io.grpc.ServerCallHandler;
import io.grpc.ServerInterceptor;
import io.grpc.Status;
import io.opentelemetry.api.trace.Span;
import io.opentelemetry.api.trace.SpanKind;
import io.opentelemetry.api.trace.Tracer;
import io.opentelemetry.context.Scope;
import io.opentelemetry.context.propagation.TextMapPropagator;
import java.util.Set;
import java.util.function.Consumer;

/**
 * Outermost on the server: the served call's span, a child of the trace context the caller sent,
 * sampled as the SDK's sampler says. The span goes into the call's gRPC context; an interceptor
 * further in that runs every callback in a context of its own built on this one (the budget's,
 * admission's) saves attaching it again around each callback; without one, this interceptor's
 * listener attaches it. Every callback also runs with the
 * span current in OpenTelemetry's context, so that what the handler does under other
 * instrumentation (an HTTP client, a database, an {@code @Observed} method) joins the call's trace,
 * sampled or not as the call is. Only a recorded span has its call wrapped, to end it with the
 * call's status.
 */
public final class ServedCallInterceptor implements ServerInterceptor {

    private final Tracer tracer;
    private final TextMapPropagator propagator;
    private final MetadataCarrier carrier;
    private final Set<String> excludedServices;

    public ServedCallInterceptor(Tracer tracer, TextMapPropagator propagator, Set<String> excludedServices) {
        this.tracer = tracer;
        this.propagator = propagator;
        this.carrier = new MetadataCarrier(propagator.fields());
        this.excludedServices = Set.copyOf(excludedServices);
    }

    @Override
    public <ReqT, RespT> ServerCall.Listener<ReqT> interceptCall(
            ServerCall<ReqT, RespT> call, Metadata headers, ServerCallHandler<ReqT, RespT> next) {
        MethodDescriptor<ReqT, RespT> method = call.getMethodDescriptor();
        if (excludedServices.contains(method.getServiceName()) || WarmUpMark.active()) {
            return next.startCall(call, headers);
        }
        io.opentelemetry.context.Context parent =
                propagator.extract(io.opentelemetry.context.Context.root(), headers, carrier);
        Span span = tracer.spanBuilder(method.getFullMethodName())
                .setParent(parent)
                .setSpanKind(SpanKind.SERVER)
                .startSpan();
        ServedSpan served;
        ServerCall<ReqT, RespT> traced = call;
        if (span.isRecording()) {
            Attributes.rpc(span, method);
            served = new ServedSpan(span, System.nanoTime());
            traced = new EndingCall<>(call, served);
        } else {
            served = new ServedSpan(span, 0);
        }
        Context context = Context.current().withValue(ServedSpan.KEY, served);
        ServerCall.Listener<ReqT> handler;
        Context previous = context.attach();
        try {
            handler = next.startCall(traced, headers);
        } catch (RuntimeException | Error e) {
            served.end(Status.fromThrowable(e));
            throw e;
        } finally {
            context.detach(previous);
        }
        Context inner = ContextAttachingListener.attachedContextOf(handler);
        boolean attachedFurtherIn = inner != null && ServedSpan.KEY.get(inner) == served;
        return new TracedListener<>(handler, served, parent.with(span), attachedFurtherIn ? null : context);
    }

    private static final class EndingCall<ReqT, RespT>
            extends ForwardingServerCall.SimpleForwardingServerCall<ReqT, RespT> {

        private final ServedSpan served;

        EndingCall(ServerCall<ReqT, RespT> delegate, ServedSpan served) {
            super(delegate);
            this.served = served;
        }

        @Override
        public void close(Status status, Metadata trailers) {
            served.end(status);
            super.close(status, trailers);
        }
    }

    /**
     * Runs every callback with the span current in OpenTelemetry's context (and in the call's gRPC
     * context, when no listener further in attaches one built on it), and ends a recorded span of a
     * call that never closed: cancelled by its caller, or past its deadline.
     */
    private static final class TracedListener<ReqT>
            extends ForwardingServerCallListener.SimpleForwardingServerCallListener<ReqT>
            implements ContextAttachingListener {

        private final ServedSpan served;
        private final io.opentelemetry.context.Context current;
        /** The call's gRPC context, attached around each callback; null when a listener further in does. */
        private final Context attaching;

        private final Context attached;

        TracedListener(
                ServerCall.Listener<ReqT> delegate,
                ServedSpan served,
                io.opentelemetry.context.Context current,
                Context attaching) {
            super(delegate);
            this.served = served;
            this.current = current;
            this.attaching = attaching;
            this.attached = attaching != null ? attaching : ContextAttachingListener.attachedContextOf(delegate);
        }

        @Override
        public Context attachedContext() {
            return attached;
        }

        @Override
        public void onMessage(ReqT message) {
            try (Scope ignored = current.makeCurrent()) {
                Context previous = attachCallContext();
                try {
                    super.onMessage(message);
                } finally {
                    detachCallContext(previous);
                }
            }
        }

        @Override
        public void onHalfClose() {
            inContexts(ServerCall.Listener::onHalfClose);
        }

        @Override
        public void onReady() {
            inContexts(ServerCall.Listener::onReady);
        }

        @Override
        public void onCancel() {
            try {
                inContexts(ServerCall.Listener::onCancel);
            } finally {
                served.end(Status.CANCELLED);
            }
        }

        @Override
        public void onComplete() {
            try {
                inContexts(ServerCall.Listener::onComplete);
            } finally {
                served.end(Status.OK);
            }
        }

        /** Takes non-capturing method references: nothing is allocated per callback. */
        private void inContexts(Consumer<ServerCall.Listener<ReqT>> callback) {
            try (Scope ignored = current.makeCurrent()) {
                Context previous = attachCallContext();
                try {
                    callback.accept(delegate());
                } finally {
                    detachCallContext(previous);
                }
            }
        }

        /** Attaches the call's gRPC context where this listener is the one to; the context it replaced. */
        private Context attachCallContext() {
            return attaching == null ? null : attaching.attach();
        }

        private void detachCallContext(Context previous) {
            if (attaching != null) {
                attaching.detach(previous);
            }
        }
    }
}
