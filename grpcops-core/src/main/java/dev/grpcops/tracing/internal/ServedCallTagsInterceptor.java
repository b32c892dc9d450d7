package dev.grpcops.tracing.internal;

import dev.grpcops.admission.Caller;
import dev.grpcops.admission.CallerPolicy;
import dev.grpcops.budget.Budget;
import dev.grpcops.budget.BudgetRules;
import dev.grpcops.budget.LedgerLine;
import dev.grpcops.budget.internal.CallLedger;
import io.grpc.ForwardingServerCall;
import io.grpc.Metadata;
import io.grpc.ServerCall;
import io.grpc.ServerCallHandler;
import io.grpc.ServerInterceptor;
import io.grpc.Status;
import io.opentelemetry.api.common.AttributeKey;
import io.opentelemetry.api.trace.Span;
import java.util.Optional;

/**
 * Once admission has let the call in (this interceptor sits inside it): the budget the call arrived
 * with, the reserve, the caller, its criticality and level, and how long admission held it, onto the
 * served call's span, when that is recorded; when the call is answered, the rest of its budget ledger:
 * how long the handler took, the deadline it handed downstream, and the budget left (slack).
 */
public final class ServedCallTagsInterceptor implements ServerInterceptor {

    private static final AttributeKey<Double> WAIT = AttributeKey.doubleKey("grpcops.admission.wait_ms");
    private static final AttributeKey<Double> REMAINING = AttributeKey.doubleKey("grpcops.budget.remaining_ms");
    private static final AttributeKey<Double> RESERVE = AttributeKey.doubleKey("grpcops.budget.reserve_ms");
    private static final AttributeKey<Boolean> DEFAULTED = AttributeKey.booleanKey("grpcops.budget.defaulted");
    private static final AttributeKey<Boolean> AS_RETRY = AttributeKey.booleanKey("grpcops.budget.arrived_as_retry");
    private static final AttributeKey<String> CALLER = AttributeKey.stringKey("grpcops.caller");
    private static final AttributeKey<String> CRITICALITY = AttributeKey.stringKey("grpcops.criticality");
    private static final AttributeKey<String> LEVEL = AttributeKey.stringKey("grpcops.admission.level");
    private static final AttributeKey<Double> HANDLER = AttributeKey.doubleKey("grpcops.budget.handler_ms");
    private static final AttributeKey<Double> GRANTED = AttributeKey.doubleKey("grpcops.budget.granted_ms");
    private static final AttributeKey<Double> SLACK = AttributeKey.doubleKey("grpcops.budget.slack_ms");

    private final Double reserveMillis;
    private final CallerPolicy policy;

    /**
     * @param rules the budget's rules, for the reserve; null without a budget
     * @param policy the admission's caller policy, for the level; null without admission
     */
    public ServedCallTagsInterceptor(BudgetRules rules, CallerPolicy policy) {
        this.reserveMillis =
                rules == null ? null : Attributes.millis(rules.reserve().toNanos());
        this.policy = policy;
    }

    @Override
    public <ReqT, RespT> ServerCall.Listener<ReqT> interceptCall(
            ServerCall<ReqT, RespT> call, Metadata headers, ServerCallHandler<ReqT, RespT> next) {
        ServedSpan served = ServedSpan.current();
        if (served == null || !served.recording()) {
            return next.startCall(call, headers);
        }
        tag(served);
        CallLedger ledger = CallLedger.current();
        if (ledger == null) {
            return next.startCall(call, headers);
        }
        return next.startCall(
                new ForwardingServerCall.SimpleForwardingServerCall<>(call) {
                    @Override
                    public void close(Status status, Metadata trailers) {
                        // The rest of the hop's ledger line: its handler, what it handed downstream, what was left.
                        LedgerLine line = ledger.answered();
                        Span span = served.span();
                        span.setAttribute(
                                HANDLER, Attributes.millis(line.handler().toNanos()));
                        span.setAttribute(
                                GRANTED, Attributes.millis(line.granted().toNanos()));
                        span.setAttribute(SLACK, Attributes.millis(line.slack().toNanos()));
                        super.close(status, trailers);
                    }
                },
                headers);
    }

    private void tag(ServedSpan served) {
        Span span = served.span();
        long waitNanos = Math.max(0, System.nanoTime() - served.arrivedNanos());
        span.setAttribute(WAIT, Attributes.millis(waitNanos));
        Optional<Budget> budget = Budget.current();
        if (budget.isPresent()) {
            // What the call had left when it arrived, before admission held it.
            span.setAttribute(
                    REMAINING, Attributes.millis(budget.get().remaining().toNanos() + waitNanos));
            if (reserveMillis != null) {
                span.setAttribute(RESERVE, reserveMillis);
            }
            span.setAttribute(DEFAULTED, budget.get().defaulted());
            if (budget.get().arrivedAsRetry()) {
                span.setAttribute(AS_RETRY, true);
            }
        }
        Optional<Caller> caller = Caller.current();
        if (caller.isPresent()) {
            span.setAttribute(CALLER, caller.get().id());
            span.setAttribute(CRITICALITY, caller.get().criticality().value());
            if (policy != null) {
                span.setAttribute(LEVEL, policy.levelOf(caller.get()));
            }
        }
    }
}
