package dev.grpcops.deadline.internal;

import dev.grpcops.deadline.Budget;
import dev.grpcops.deadline.BudgetListener;
import dev.grpcops.deadline.BudgetRules;
import dev.grpcops.internal.ContextAttachingListener;
import dev.grpcops.internal.ContextualizedListener;
import dev.grpcops.internal.Headers;
import dev.grpcops.internal.WarmUpMark;
import io.grpc.Context;
import io.grpc.Metadata;
import io.grpc.ServerCall;
import io.grpc.ServerCallHandler;
import io.grpc.ServerInterceptor;
import java.util.Set;

/**
 * Gives every served call its budget: the caller's deadline, or the default when it sent none.
 * The budget rides in the call's {@link Context}, where the service code and
 * {@link BudgetClientInterceptor} find it. A call that arrived with {@code grpc-previous-rpc-attempts}
 * (a retry or hedge of an upstream hop) gets a budget that says so: no extra attempt is made under it;
 * so does a warm-up call ({@code grpcops-warm-up: 1}), whose downstream calls are not accounted either.
 */
public final class BudgetServerInterceptor implements ServerInterceptor {

    private final BudgetRules rules;
    private final BudgetListener listener;
    private final Set<String> excludedServices;

    /**
     * @param rules the budget rules
     * @param listener told of every arrival
     * @param excludedServices services whose calls get no budget, e.g. long-lived health
     *     {@code Watch} streams, which would otherwise count as calls without a deadline
     */
    public BudgetServerInterceptor(BudgetRules rules, BudgetListener listener, Set<String> excludedServices) {
        this.rules = rules;
        this.listener = listener;
        this.excludedServices = Set.copyOf(excludedServices);
    }

    @Override
    public <ReqT, RespT> ServerCall.Listener<ReqT> interceptCall(
            ServerCall<ReqT, RespT> call, Metadata headers, ServerCallHandler<ReqT, RespT> next) {
        if (excludedServices.contains(call.getMethodDescriptor().getServiceName())) {
            return next.startCall(call, headers);
        }
        // The server has already turned the caller's grpc-timeout header into the context's deadline.
        Budget budget = Budget.arrived(Context.current().getDeadline(), rules, Headers.arrivedAsRetry(headers));
        if (!WarmUpMark.active()) {
            // The process's own warm-up calls feed no statistics.
            listener.arrived(call.getMethodDescriptor().getFullMethodName(), budget);
        }
        Context context = budget.attachTo(Context.current());
        ServerCall.Listener<ReqT> handler;
        Context previous = context.attach();
        try {
            handler = next.startCall(call, headers);
        } finally {
            context.detach(previous);
        }
        // Admission (inside this interceptor) runs every callback in its own child of this context:
        // attaching this one around each callback as well would only cost time.
        Context inner = ContextAttachingListener.attachedContextOf(handler);
        if (inner != null && budget.isCurrentIn(inner)) {
            return handler;
        }
        return new ContextualizedListener<>(context, handler);
    }
}
