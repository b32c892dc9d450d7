package dev.grpcops.warmup.internal;

import dev.grpcops.internal.WarmUpMark;
import io.grpc.Context;
import io.grpc.Contexts;
import io.grpc.Metadata;
import io.grpc.ServerCall;
import io.grpc.ServerCallHandler;
import io.grpc.ServerInterceptor;

/**
 * Serves the calls that carry this process's warm-up token in a context marked as warm-up
 * ({@link WarmUpMark}); the header of any other value is dropped, so that nothing further in can
 * mistake it. Runs before the interceptors that look at the mark.
 */
public final class WarmUpServerInterceptor implements ServerInterceptor {

    @Override
    public <ReqT, RespT> ServerCall.Listener<ReqT> interceptCall(
            ServerCall<ReqT, RespT> call, Metadata headers, ServerCallHandler<ReqT, RespT> next) {
        if (!headers.containsKey(WarmUpMark.HEADER)) {
            return next.startCall(call, headers);
        }
        boolean ours = WarmUpMark.carriedBy(headers);
        headers.discardAll(WarmUpMark.HEADER);
        if (!ours) {
            return next.startCall(call, headers);
        }
        return Contexts.interceptCall(WarmUpMark.attachTo(Context.current()), call, headers, next);
    }
}
