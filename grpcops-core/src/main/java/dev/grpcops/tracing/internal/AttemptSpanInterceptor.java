package dev.grpcops.tracing.internal;

import dev.grpcops.internal.Headers;
import dev.grpcops.internal.WarmUpMark;
import io.grpc.CallOptions;
import io.grpc.Channel;
import io.grpc.ClientCall;
import io.grpc.ClientInterceptor;
import io.grpc.Deadline;
import io.grpc.ForwardingClientCall;
import io.grpc.ForwardingClientCallListener;
import io.grpc.Metadata;
import io.grpc.MethodDescriptor;
import io.grpc.Status;
import io.opentelemetry.api.common.AttributeKey;
import io.opentelemetry.api.trace.Span;
import io.opentelemetry.api.trace.SpanContext;
import io.opentelemetry.api.trace.SpanKind;
import io.opentelemetry.api.trace.TraceFlags;
import io.opentelemetry.api.trace.TraceState;
import io.opentelemetry.api.trace.Tracer;
import io.opentelemetry.context.propagation.TextMapPropagator;
import java.util.concurrent.TimeUnit;

/**
 * Innermost on a channel: each attempt (a retry or a hedge is a call of its own) gets a span, a
 * child of the served call's whatever thread starts it, carrying the deadline handed down and the
 * attempt number, and sends its trace context downstream. Under a served call whose trace is not
 * sampled, no span is made: the served call's context goes down as it is, saying "not sampled".
 */
public final class AttemptSpanInterceptor implements ClientInterceptor {

    static final AttributeKey<Double> DEADLINE = AttributeKey.doubleKey("grpcops.deadline_ms");
    static final AttributeKey<Long> ATTEMPT = AttributeKey.longKey("grpcops.attempt");

    /** The trace context of a warm-up call's downstream calls: valid, never sampled. */
    private static final SpanContext NOT_SAMPLED = SpanContext.create(
            "00000000000000000000000000000001", "0000000000000001", TraceFlags.getDefault(), TraceState.getDefault());

    private final Tracer tracer;
    private final TextMapPropagator propagator;
    private final MetadataCarrier carrier;

    public AttemptSpanInterceptor(Tracer tracer, TextMapPropagator propagator) {
        this.tracer = tracer;
        this.propagator = propagator;
        this.carrier = new MetadataCarrier(propagator.fields());
    }

    @Override
    public <ReqT, RespT> ClientCall<ReqT, RespT> interceptCall(
            MethodDescriptor<ReqT, RespT> method, CallOptions options, Channel next) {
        ServedSpan served = ServedSpan.current();
        Span parent = served != null ? served.span() : Span.current();
        return new AttemptCall<>(
                next.newCall(method, options), method, options.getDeadline(), parent, WarmUpMark.active());
    }

    private final class AttemptCall<ReqT, RespT> extends ForwardingClientCall.SimpleForwardingClientCall<ReqT, RespT> {

        private final MethodDescriptor<ReqT, RespT> method;
        private final Deadline deadline;
        private final Span parent;
        /** Made while serving one of the process's own warm-up calls. */
        private final boolean warmUp;

        AttemptCall(
                ClientCall<ReqT, RespT> delegate,
                MethodDescriptor<ReqT, RespT> method,
                Deadline deadline,
                Span parent,
                boolean warmUp) {
            super(delegate);
            this.method = method;
            this.deadline = deadline;
            this.parent = parent;
            this.warmUp = warmUp;
        }

        @Override
        public void start(Listener<RespT> listener, Metadata headers) {
            if (warmUp || headers.containsKey(WarmUpMark.HEADER)) {
                // A service warming itself up is not traced, downstream included: its calls go with a
                // trace context that says "not sampled", so that the next hop starts no trace of its own.
                propagator.inject(
                        io.opentelemetry.context.Context.root().with(Span.wrap(NOT_SAMPLED)), headers, carrier);
                super.start(listener, headers);
                return;
            }
            SpanContext parentContext = parent.getSpanContext();
            io.opentelemetry.context.Context context = parentContext.isValid()
                    ? io.opentelemetry.context.Context.root().with(parent)
                    : io.opentelemetry.context.Context.root();
            Span attempt;
            if (parentContext.isValid() && !parentContext.isSampled()) {
                attempt = parent;
            } else {
                attempt = tracer.spanBuilder(method.getFullMethodName())
                        .setParent(context)
                        .setSpanKind(SpanKind.CLIENT)
                        .startSpan();
                context = context.with(attempt);
            }
            Listener<RespT> answered = listener;
            if (attempt.isRecording()) {
                Attributes.rpc(attempt, method);
                if (deadline != null) {
                    attempt.setAttribute(DEADLINE, Attributes.millis(deadline.timeRemaining(TimeUnit.NANOSECONDS)));
                }
                attempt.setAttribute(ATTEMPT, attemptNumber(headers.get(Headers.PREVIOUS_ATTEMPTS)));
                answered = new EndingListener<>(listener, attempt);
            }
            propagator.inject(context, headers, carrier);
            super.start(answered, headers);
        }
    }

    /** {@code grpc-previous-rpc-attempts} as a number: 0 for a first attempt (no header). */
    private static long attemptNumber(String previous) {
        if (previous == null) {
            return 0;
        }
        try {
            return Long.parseLong(previous.trim());
        } catch (NumberFormatException unreadable) {
            return -1;
        }
    }

    private static final class EndingListener<RespT>
            extends ForwardingClientCallListener.SimpleForwardingClientCallListener<RespT> {

        private final Span attempt;

        EndingListener(ClientCall.Listener<RespT> delegate, Span attempt) {
            super(delegate);
            this.attempt = attempt;
        }

        @Override
        public void onClose(Status status, Metadata trailers) {
            attempt.setAttribute(ServedSpan.STATUS_CODE, (long) status.getCode().value());
            if (!status.isOk()) {
                ServedSpan.markError(attempt, status);
            }
            attempt.end();
            super.onClose(status, trailers);
        }
    }
}
