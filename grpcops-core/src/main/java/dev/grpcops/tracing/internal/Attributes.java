package dev.grpcops.tracing.internal;

import io.grpc.MethodDescriptor;
import io.opentelemetry.api.common.AttributeKey;
import io.opentelemetry.api.trace.Span;

/** The attributes the library writes, by OpenTelemetry's semantic conventions for RPC where they have one. */
final class Attributes {

    static final AttributeKey<String> RPC_SYSTEM = AttributeKey.stringKey("rpc.system");
    static final AttributeKey<String> RPC_SERVICE = AttributeKey.stringKey("rpc.service");
    static final AttributeKey<String> RPC_METHOD = AttributeKey.stringKey("rpc.method");

    private Attributes() {}

    static void rpc(Span span, MethodDescriptor<?, ?> method) {
        span.setAttribute(RPC_SYSTEM, "grpc");
        String service = method.getServiceName();
        if (service != null) {
            span.setAttribute(RPC_SERVICE, service);
        }
        String bare = method.getBareMethodName();
        if (bare != null) {
            span.setAttribute(RPC_METHOD, bare);
        }
    }

    /** Milliseconds to a tenth, as every duration attribute of the library is written. */
    static double millis(long nanos) {
        return Math.round(nanos / 1e5) / 10.0;
    }
}
