package dev.grpcops.lifecycle;

import io.grpc.ForwardingServerCallListener;
import io.grpc.Metadata;
import io.grpc.ServerCall;
import io.grpc.ServerCallHandler;
import io.grpc.ServerInterceptor;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import java.util.Set;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Counts the calls being served, long-lived streams (health Watch) left out, so that a stopping
 * server knows when the last one has finished. Exported as {@code grpc_server_calls_in_flight}.
 */
public final class InFlightCalls implements ServerInterceptor {

    private final AtomicInteger inFlight = new AtomicInteger();
    private final Set<String> longLivedServices;

    public InFlightCalls(Set<String> longLivedServices, MeterRegistry registry) {
        this.longLivedServices = Set.copyOf(longLivedServices);
        Gauge.builder("grpc.server.calls.in.flight", inFlight, AtomicInteger::get)
                .description("Calls being served, long-lived streams such as health Watch left out")
                .register(registry);
    }

    public int count() {
        return inFlight.get();
    }

    @Override
    public <ReqT, RespT> ServerCall.Listener<ReqT> interceptCall(
            ServerCall<ReqT, RespT> call, Metadata headers, ServerCallHandler<ReqT, RespT> next) {
        if (longLivedServices.contains(call.getMethodDescriptor().getServiceName())) {
            return next.startCall(call, headers);
        }
        inFlight.incrementAndGet();
        AtomicBoolean released = new AtomicBoolean();
        Runnable release = () -> {
            if (released.compareAndSet(false, true)) {
                inFlight.decrementAndGet();
            }
        };
        ServerCall.Listener<ReqT> listener;
        try {
            listener = next.startCall(call, headers);
        } catch (RuntimeException e) {
            release.run();
            throw e;
        }
        // Exactly one of onComplete and onCancel ends every call.
        return new ForwardingServerCallListener.SimpleForwardingServerCallListener<>(listener) {
            @Override
            public void onComplete() {
                try {
                    super.onComplete();
                } finally {
                    release.run();
                }
            }

            @Override
            public void onCancel() {
                try {
                    super.onCancel();
                } finally {
                    release.run();
                }
            }
        };
    }
}
