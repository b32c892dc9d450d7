package dev.grpcops.budget.internal;

import dev.grpcops.budget.Budget;
import dev.grpcops.budget.BudgetListener;
import dev.grpcops.budget.BudgetRules;
import io.grpc.Context;
import io.grpc.Contexts;
import io.grpc.Metadata;
import io.grpc.ServerCall;
import io.grpc.ServerCallHandler;
import io.grpc.ServerInterceptor;
import java.util.Set;

/**
 * Gives every served call its budget: the caller's deadline, or the default when it sent none.
 * The budget rides in the call's {@link Context}, where the service code and
 * {@link BudgetClientInterceptor} find it.
 */
public final class BudgetServerInterceptor implements ServerInterceptor {

    private final BudgetRules rules;
    private final BudgetListener listener;
    private final Set<String> excludedServices;

    /**
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
        Budget budget = Budget.arrived(Context.current().getDeadline(), rules);
        listener.arrived(call.getMethodDescriptor().getFullMethodName(), budget);
        return Contexts.interceptCall(budget.attachTo(Context.current()), call, headers, next);
    }
}
