package dev.grpcops.admission.internal;

import dev.grpcops.admission.Admission;
import dev.grpcops.admission.CallWidth;
import dev.grpcops.admission.Caller;
import dev.grpcops.admission.CallerPolicy;
import dev.grpcops.budget.Budget;
import dev.grpcops.internal.WarmUpMark;
import io.grpc.Context;
import io.grpc.Deadline;
import io.grpc.Grpc;
import io.grpc.Metadata;
import io.grpc.MethodDescriptor;
import io.grpc.ServerCall;
import io.grpc.ServerCallHandler;
import io.grpc.ServerInterceptor;
import java.time.Duration;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.Executor;
import java.util.concurrent.TimeUnit;
import java.util.function.LongSupplier;

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
    private final long downstreamSetAsideNanos;
    private final Map<String, CallWidth<?>> widths;
    private final LongSupplier nanoClock;
    private final Executor queuedStarts;

    /**
     * @param defaultBudget what a call without a deadline is assumed to have (the budget's DEFAULT)
     * @param noDeadlineBeyond deadlines further away count as none (the budget rules' cut-off)
     * @param needed what a call needs besides waiting: for a hop that calls downstream, reserve + min-downstream
     * @param downstreamSetAside of {@code needed}, what is set aside for the calls it makes downstream (min-downstream)
     * @param nanoClock admission's clock, on which the time calls wait on their downstream calls is measured
     * @param queuedStarts where a call that waited for its seat starts (the server's executor); null: on
     *     the thread that freed the seat
     */
    public AdmissionServerInterceptor(
            Admission admission,
            CallerPolicy policy,
            Set<String> exemptServices,
            Set<String> exemptMethods,
            Duration defaultBudget,
            Duration noDeadlineBeyond,
            Duration needed,
            Duration downstreamSetAside,
            Map<String, CallWidth<?>> widths,
            LongSupplier nanoClock,
            Executor queuedStarts) {
        this.admission = admission;
        this.policy = policy;
        this.exemptServices = Set.copyOf(exemptServices);
        this.exemptMethods = Set.copyOf(exemptMethods);
        this.defaultBudgetNanos = defaultBudget.toNanos();
        this.noDeadlineBeyondNanos = noDeadlineBeyond.toNanos();
        this.neededNanos = needed.toNanos();
        this.downstreamSetAsideNanos = downstreamSetAside.toNanos();
        this.widths = Map.copyOf(widths);
        this.nanoClock = nanoClock;
        this.queuedStarts = queuedStarts;
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
        // The process's own warm-up calls: admission leaves them out of its measures (AdmissionRequest#warmUp).
        AdmittedCall<ReqT, RespT> admitted = new AdmittedCall<>(
                caller,
                call,
                headers,
                next,
                context,
                nanoClock,
                WarmUpMark.active(),
                admission.adaptsLimit(),
                downstreamSetAsideNanos,
                queuedStarts);
        Admission.Level level = admission.level(policy.levelOf(caller));
        CallWidth<?> width = widths.get(method.getFullMethodName());
        if (width != null) {
            // Its width is in its request: read first (the transport holds it meanwhile), then offered.
            call.request(1);
            return new ReadFirst<>(admitted, request -> {
                admitted.offering();
                admitted.offered(admission.offer(level, remaining(context) - neededNanos, width.of(request), admitted));
            });
        }
        admitted.offering();
        admitted.offered(admission.offer(level, remaining(context) - neededNanos, admitted));
        return admitted.listener();
    }

    /**
     * Stands in for admission's listener until the request has come: then offers the call, and from
     * there passes every event on (the request first). A caller gone before its request came took
     * no seat and leaves nothing.
     */
    private static final class ReadFirst<ReqT> extends ServerCall.Listener<ReqT> {

        private final AdmittedCall<ReqT, ?> admitted;
        private final java.util.function.Consumer<ReqT> offer;
        /** The transport calls a listener one event at a time: no lock needed. */
        private boolean offered;

        ReadFirst(AdmittedCall<ReqT, ?> admitted, java.util.function.Consumer<ReqT> offer) {
            this.admitted = admitted;
            this.offer = offer;
        }

        @Override
        public void onMessage(ReqT message) {
            if (!offered) {
                offered = true;
                offer.accept(message);
            }
            admitted.listener().onMessage(message);
        }

        @Override
        public void onHalfClose() {
            if (!offered) {
                offered = true; // no request at all: one seat, and the handler says what is wrong
                offer.accept(null);
            }
            admitted.listener().onHalfClose();
        }

        @Override
        public void onReady() {
            if (offered) {
                admitted.listener().onReady();
            }
        }

        @Override
        public void onCancel() {
            if (offered) {
                admitted.listener().onCancel();
            }
        }

        @Override
        public void onComplete() {
            if (offered) {
                admitted.listener().onComplete();
            }
        }
    }

    /** The call's budget when the budget interceptor ran first (it should), else its deadline or the default. */
    private long remaining(Context context) {
        Budget budget = Budget.currentOrNull(); // context is the current one's child: same budget
        if (budget != null) {
            return budget.remainingNanos();
        }
        Deadline deadline = context.getDeadline();
        if (deadline == null) {
            return defaultBudgetNanos;
        }
        long remaining = deadline.timeRemaining(TimeUnit.NANOSECONDS);
        return remaining > noDeadlineBeyondNanos ? defaultBudgetNanos : remaining;
    }
}
