package dev.grpcops.admission.internal;

import dev.grpcops.admission.Admission;
import dev.grpcops.admission.Caller;
import dev.grpcops.admission.CallerPolicy;
import dev.grpcops.deadline.Budget;
import io.grpc.Context;
import io.grpc.Deadline;
import io.grpc.Grpc;
import io.grpc.Metadata;
import io.grpc.MethodDescriptor;
import io.grpc.ServerCall;
import io.grpc.ServerCallHandler;
import io.grpc.ServerInterceptor;
import java.time.Duration;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.TimeUnit;

/**
 * Admits every call through {@link Admission} before any later interceptor or handler runs
 * (design §9): classifies it by {@code x-grpcops-caller} / {@code x-grpcops-criticality} (the peer's
 * address when no caller is named), and starts it when it gets a seat, which may be later, from
 * another thread: until then nobody asks the transport for its request message. Exempt services
 * and methods (health, reflection, admin) pass straight through.
 */
public final class AdmissionServerInterceptor implements ServerInterceptor {

    private final Admission admission;
    private final CallerPolicy policy;
    private final Set<String> exemptServices;
    private final Set<String> exemptMethods;
    private final long defaultBudgetNanos;
    private final long noDeadlineBeyondNanos;
    private final long neededNanos;

    /**
     * @param defaultBudget what a call without a deadline is assumed to have (the budget's DEFAULT)
     * @param noDeadlineBeyond deadlines further away count as none (the budget rules' cut-off)
     * @param needed what a call needs besides waiting: for a hop that calls downstream, reserve + min-downstream
     */
    public AdmissionServerInterceptor(
            Admission admission,
            CallerPolicy policy,
            Set<String> exemptServices,
            Set<String> exemptMethods,
            Duration defaultBudget,
            Duration noDeadlineBeyond,
            Duration needed) {
        this.admission = admission;
        this.policy = policy;
        this.exemptServices = Set.copyOf(exemptServices);
        this.exemptMethods = Set.copyOf(exemptMethods);
        this.defaultBudgetNanos = defaultBudget.toNanos();
        this.noDeadlineBeyondNanos = noDeadlineBeyond.toNanos();
        this.neededNanos = needed.toNanos();
    }

    @Override
    public <ReqT, RespT> ServerCall.Listener<ReqT> interceptCall(
            ServerCall<ReqT, RespT> call, Metadata headers, ServerCallHandler<ReqT, RespT> next) {
        MethodDescriptor<ReqT, RespT> method = call.getMethodDescriptor();
        if (exemptServices.contains(method.getServiceName()) || exemptMethods.contains(method.getFullMethodName())) {
            return next.startCall(call, headers);
        }
        Caller caller = policy.classify(
                headers.get(Caller.CALLER_KEY),
                headers.get(Caller.CRITICALITY_KEY),
                call.getAttributes().get(Grpc.TRANSPORT_ATTR_REMOTE_ADDR));
        Context context = caller.attachTo(Context.current());
        AdmittedCall<ReqT, RespT> admitted = new AdmittedCall<>(caller, call, headers, next, context);
        admitted.offered(
                admission.offer(admission.level(policy.levelOf(caller)), remaining(context) - neededNanos, admitted));
        return admitted.listener();
    }

    /** The call's budget when the budget interceptor ran first (it should), else its deadline or the default. */
    private long remaining(Context context) {
        Optional<Budget> budget = Budget.current(); // context is the current one's child: same budget
        if (budget.isPresent()) {
            return budget.get().remaining().toNanos();
        }
        Deadline deadline = context.getDeadline();
        if (deadline == null) {
            return defaultBudgetNanos;
        }
        long remaining = deadline.timeRemaining(TimeUnit.NANOSECONDS);
        return remaining > noDeadlineBeyondNanos ? defaultBudgetNanos : remaining;
    }
}
