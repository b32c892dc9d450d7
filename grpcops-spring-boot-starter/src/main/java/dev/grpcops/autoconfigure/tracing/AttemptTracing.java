package dev.grpcops.autoconfigure.tracing;

import io.grpc.CallOptions;
import io.grpc.Channel;
import io.grpc.ClientCall;
import io.grpc.ClientInterceptor;
import io.grpc.Deadline;
import io.grpc.ForwardingClientCall;
import io.grpc.Metadata;
import io.grpc.MethodDescriptor;
import io.micrometer.observation.Observation;
import io.micrometer.observation.ObservationRegistry;
import java.util.concurrent.TimeUnit;

/**
 * Each downstream attempt's span, and what the library handed it. Two interceptors:
 * {@link #parent()} outside Micrometer's observation interceptor makes the served call's span the
 * parent of an attempt started on a thread that has none current (a hedge or a pushed-back retry on
 * the timer thread, a call started once admission let it in); {@link #tags()}, innermost, writes the
 * deadline handed downstream and the attempt number ({@code grpc-previous-rpc-attempts}) onto the
 * attempt's own span.
 */
final class AttemptTracing {

    private static final Metadata.Key<String> PREVIOUS_ATTEMPTS =
            Metadata.Key.of("grpc-previous-rpc-attempts", Metadata.ASCII_STRING_MARSHALLER);

    private final ObservationRegistry registry;

    AttemptTracing(ObservationRegistry registry) {
        this.registry = registry;
    }

    ClientInterceptor parent() {
        return new ClientInterceptor() {
            @Override
            public <ReqT, RespT> ClientCall<ReqT, RespT> interceptCall(
                    MethodDescriptor<ReqT, RespT> method, CallOptions options, Channel next) {
                Observation served = CallTags.served();
                if (served == null || registry.getCurrentObservation() != null) {
                    return next.newCall(method, options);
                }
                ClientCall<ReqT, RespT> call;
                try (Observation.Scope scope = served.openScope()) {
                    call = next.newCall(method, options);
                }
                return new ForwardingClientCall.SimpleForwardingClientCall<>(call) {
                    @Override
                    public void start(Listener<RespT> listener, Metadata headers) {
                        try (Observation.Scope scope = served.openScope()) {
                            super.start(listener, headers);
                        }
                    }
                };
            }
        };
    }

    ClientInterceptor tags() {
        return new ClientInterceptor() {
            @Override
            public <ReqT, RespT> ClientCall<ReqT, RespT> interceptCall(
                    MethodDescriptor<ReqT, RespT> method, CallOptions options, Channel next) {
                return new ForwardingClientCall.SimpleForwardingClientCall<>(next.newCall(method, options)) {
                    @Override
                    public void start(Listener<RespT> listener, Metadata headers) {
                        Observation attempt = registry.getCurrentObservation();
                        if (attempt != null && !attempt.isNoop()) {
                            Deadline deadline = options.getDeadline();
                            if (deadline != null) {
                                attempt.highCardinalityKeyValue(
                                        "grpcops.deadline_ms",
                                        ServedCallTracing.millis(deadline.timeRemaining(TimeUnit.NANOSECONDS)));
                            }
                            String previous = headers.get(PREVIOUS_ATTEMPTS);
                            attempt.highCardinalityKeyValue(
                                    "grpcops.attempt", previous == null ? "0" : previous.trim());
                        }
                        super.start(listener, headers);
                    }
                };
            }
        };
    }
}
