package dev.grpcops.client;

import io.grpc.CallOptions;
import io.grpc.Channel;
import io.grpc.ClientCall;
import io.grpc.ClientInterceptor;
import io.grpc.MethodDescriptor;

/**
 * What the latency-aware balancer ({@link PeakEwmaLoadBalancerProvider}) of a channel decided
 * besides its plain picks, for metrics: a pick that passed over the replica the draws chose, a
 * replica's probe, a replica's slow start, a replica ejected by outlier detection and back. A channel's balancer reports to the listener its calls
 * carry ({@link #interceptor()}); calls without one report nothing.
 *
 * <p>Called on the calls' threads, as they are picked: implementations must be cheap and must not
 * block.
 */
public interface BalancingListener {

    /** Reports nothing. */
    BalancingListener NONE = new BalancingListener() {};

    /** Why a pick passed over the replica the draws chose. */
    enum PassedOver {
        /** Its latency was more than twice the fastest's (and 20 ms more), every replica compared. */
        LATENCY,
        /** Its latency was more than what was left of the call's deadline, and another's was within it. */
        DEADLINE
    }

    /** A pick took another replica than the draws chose, for {@code reason}. */
    default void passedOver(PassedOver reason) {}

    /** A call went to a replica passed over for its latency, as the probe that re-measures it. */
    default void probed() {}

    /** A replica that joined ready peers began its slow start (reported at the next pick). */
    default void slowStartBegan() {}

    /** Outlier detection took a replica out of the pick (reported at the next pick). */
    default void ejected() {}

    /** A replica's ejection ended, or outlier detection was switched off: it is back in the pick (reported at the next pick). */
    default void returned() {}

    /** Carries this listener on every call of the channel it intercepts, for its balancer. */
    default ClientInterceptor interceptor() {
        BalancingListener listener = this;
        return new ClientInterceptor() {
            @Override
            public <ReqT, RespT> ClientCall<ReqT, RespT> interceptCall(
                    MethodDescriptor<ReqT, RespT> method, CallOptions callOptions, Channel next) {
                return next.newCall(method, callOptions.withOption(PeakEwmaLoadBalancer.LISTENER, listener));
            }
        };
    }
}
