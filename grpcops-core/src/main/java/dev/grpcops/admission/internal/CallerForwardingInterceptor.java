package dev.grpcops.admission.internal;

import dev.grpcops.admission.Caller;
import dev.grpcops.admission.Criticality;
import io.grpc.CallOptions;
import io.grpc.Channel;
import io.grpc.ClientCall;
import io.grpc.ClientInterceptor;
import io.grpc.ForwardingClientCall;
import io.grpc.Metadata;
import io.grpc.MethodDescriptor;
import java.util.Optional;

/**
 * Sends the caller of the call being served, and the criticality admission granted it, with every
 * downstream call made while serving it (design §9), like the deadline: the next hop queues and caps
 * the end caller, not this service. Values the application set on a call itself are kept.
 */
public final class CallerForwardingInterceptor implements ClientInterceptor {

    @Override
    public <ReqT, RespT> ClientCall<ReqT, RespT> interceptCall(
            MethodDescriptor<ReqT, RespT> method, CallOptions options, Channel next) {
        Optional<Caller> current = Caller.current();
        if (current.isEmpty()) {
            return next.newCall(method, options);
        }
        Caller caller = current.get();
        return new ForwardingClientCall.SimpleForwardingClientCall<>(next.newCall(method, options)) {
            @Override
            public void start(Listener<RespT> listener, Metadata headers) {
                if (!headers.containsKey(Caller.CALLER_KEY)) {
                    headers.put(Caller.CALLER_KEY, caller.id());
                }
                // Absent means default at the next hop: one header less on most calls.
                if (caller.criticality() != Criticality.DEFAULT && !headers.containsKey(Caller.CRITICALITY_KEY)) {
                    headers.put(Caller.CRITICALITY_KEY, caller.criticality().value());
                }
                super.start(listener, headers);
            }
        };
    }
}
