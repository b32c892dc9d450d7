package dev.grpcops.retry.internal;

import dev.grpcops.internal.Headers;
import dev.grpcops.internal.PickHint;
import dev.grpcops.internal.WarmUpMark;
import io.grpc.CallOptions;
import io.grpc.Channel;
import io.grpc.ClientCall;
import io.grpc.ClientInterceptor;
import io.grpc.MethodDescriptor;

/**
 * Names the target (the channel's authority) of each attempt made through {@code Retry}, so that
 * the limiters account per target, and sends {@code grpc-previous-rpc-attempts} on every extra
 * attempt, so that the next hop does not retry it again, and tells the balancer which replica an
 * extra attempt should avoid (the one the first went to). Calls made while serving one of the
 * process's warm-up calls are marked for the balancer ({@link WarmUpMark#OPTION}). Other calls made
 * outside {@code Retry} pass untouched.
 */
public final class AttemptInterceptor implements ClientInterceptor {

    @Override
    public <ReqT, RespT> ClientCall<ReqT, RespT> interceptCall(
            MethodDescriptor<ReqT, RespT> method, CallOptions options, Channel next) {
        if (WarmUpMark.active()) {
            // The process's own warm-up: one attempt, and nothing for the balancer to learn from.
            return next.newCall(method, options.withOption(WarmUpMark.OPTION, true));
        }
        Attempt attempt = Attempt.current();
        if (attempt == null) {
            return next.newCall(method, options);
        }
        attempt.sentTo(next.authority());
        ClientCall<ReqT, RespT> call = next.newCall(method, options.withOption(PickHint.KEY, attempt.hint()));
        int previous = attempt.previousAttempts();
        if (previous <= 0) {
            return call;
        }
        return Headers.sending(call, Headers.PREVIOUS_ATTEMPTS, Integer.toString(previous));
    }
}
