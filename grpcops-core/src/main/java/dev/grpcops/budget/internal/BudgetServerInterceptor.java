package dev.grpcops.budget.internal;

import dev.grpcops.admin.AdminRateLimit;
import dev.grpcops.admin.internal.RefusedAdminCalls;
import dev.grpcops.budget.Budget;
import dev.grpcops.budget.BudgetListener;
import dev.grpcops.budget.BudgetRules;
import dev.grpcops.budget.LedgerLine;
import dev.grpcops.internal.ContextAttachingListener;
import dev.grpcops.internal.ContextualizedListener;
import dev.grpcops.internal.Headers;
import dev.grpcops.internal.PeerAddresses;
import dev.grpcops.internal.SecretToken;
import dev.grpcops.internal.WarmUpMark;
import io.grpc.Context;
import io.grpc.ForwardingServerCall;
import io.grpc.Grpc;
import io.grpc.Metadata;
import io.grpc.ServerCall;
import io.grpc.ServerCallHandler;
import io.grpc.ServerInterceptor;
import io.grpc.Status;
import java.util.Set;
import org.slf4j.LoggerFactory;

/**
 * Gives every served call its budget: the caller's deadline, or the default when it sent none.
 * The budget rides in the call's {@link Context}, where the service code and
 * {@link BudgetClientInterceptor} find it. A call that arrived with {@code grpc-previous-rpc-attempts}
 * (a retry or hedge of an upstream hop) gets a budget that says so: no extra attempt is made under it;
 * so does a warm-up call ({@code grpcops-warm-up: 1}), whose downstream calls are not accounted either.
 * When the call ends, the hop's {@link LedgerLine} goes to the listener, and into the trailers (with
 * the lines its downstream calls returned) when the caller asked with the ledger token.
 */
public final class BudgetServerInterceptor implements ServerInterceptor {

    private final BudgetRules rules;
    private final BudgetListener listener;
    private final Set<String> excludedServices;
    /** The token a caller presents to get the ledger back; null: nobody gets it. */
    private final SecretToken ledgerToken;

    /** Wrong ledger tokens per caller address: an address that guessed too often is not even compared. */
    private final RefusedAdminCalls refusedAsks;

    /**
     * @param rules the budget rules
     * @param listener told of every arrival and every answer
     * @param excludedServices services whose calls get no budget, e.g. long-lived health
     *     {@code Watch} streams, which would otherwise count as calls without a deadline
     * @param ledgerToken the value of {@link LedgerLine#HEADER} that gets a caller the ledger in the
     *     trailers (its own secret, not the admin token); null or blank: the ledger is never sent
     */
    public BudgetServerInterceptor(
            BudgetRules rules, BudgetListener listener, Set<String> excludedServices, String ledgerToken) {
        this.rules = rules;
        this.listener = listener;
        this.excludedServices = Set.copyOf(excludedServices);
        this.ledgerToken = SecretToken.of(ledgerToken);
        this.refusedAsks = new RefusedAdminCalls(
                AdminRateLimit.DEFAULTS,
                System::nanoTime,
                LoggerFactory.getLogger(BudgetServerInterceptor.class)::warn,
                "ledger");
    }

    @Override
    public <ReqT, RespT> ServerCall.Listener<ReqT> interceptCall(
            ServerCall<ReqT, RespT> call, Metadata headers, ServerCallHandler<ReqT, RespT> next) {
        if (excludedServices.contains(call.getMethodDescriptor().getServiceName())) {
            return next.startCall(call, headers);
        }
        // The server has already turned the caller's grpc-timeout header into the context's deadline.
        Budget budget = Budget.arrived(Context.current().getDeadline(), rules, Headers.arrivedAsRetry(headers));
        boolean counted = !WarmUpMark.active(); // the process's own warm-up calls feed no statistics
        if (counted) {
            listener.arrived(call.getMethodDescriptor().getFullMethodName(), budget);
        }
        CallLedger ledger = new CallLedger(call.getMethodDescriptor().getServiceName(), budget, ask(headers, call));
        Context context = ledger.attachTo(budget.attachTo(Context.current()));
        ServerCall.Listener<ReqT> handler;
        Context previous = context.attach();
        try {
            handler = next.startCall(new Answering<>(call, ledger, counted), headers);
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

    /**
     * The caller's ask when it presented the ledger token, else null. A wrong token is counted
     * against the caller's address as a refused admin call is: one that sent too many gets no
     * comparison, and so learns nothing from the answer's trailers. The call itself goes on either
     * way, without the ledger.
     */
    private String ask(Metadata headers, ServerCall<?, ?> call) {
        if (ledgerToken == null) {
            return null;
        }
        String value = headers.get(LedgerLine.KEY);
        if (value == null) {
            return null;
        }
        String peer = PeerAddresses.ip(call.getAttributes().get(Grpc.TRANSPORT_ATTR_REMOTE_ADDR));
        String method = call.getMethodDescriptor().getFullMethodName();
        java.time.Duration blocked = refusedAsks.blocked(peer);
        if (!blocked.isZero()) {
            refusedAsks.refuseUnchecked(peer, method, blocked);
            return null;
        }
        if (ledgerToken.matches(value)) {
            refusedAsks.succeeded(peer);
            return value;
        }
        refusedAsks.refuse(peer, method, WRONG_LEDGER_TOKEN);
        return null;
    }

    private static final Status WRONG_LEDGER_TOKEN = Status.PERMISSION_DENIED.withDescription("ledger token rejected");

    /** Writes the hop's ledger line when the call is answered. */
    private final class Answering<ReqT, RespT> extends ForwardingServerCall.SimpleForwardingServerCall<ReqT, RespT> {

        private final CallLedger ledger;
        private final boolean counted;

        Answering(ServerCall<ReqT, RespT> call, CallLedger ledger, boolean counted) {
            super(call);
            this.ledger = ledger;
            this.counted = counted;
        }

        @Override
        public void close(Status status, Metadata trailers) {
            LedgerLine line = ledger.answered();
            if (counted) {
                listener.answered(getMethodDescriptor().getFullMethodName(), line);
            }
            if (ledger.ask() != null) {
                trailers.put(LedgerLine.KEY, line.toHeaderValue());
                for (LedgerLine downstream : ledger.downstream()) {
                    trailers.put(LedgerLine.KEY, downstream.toHeaderValue());
                }
                if (ledger.omitted() > 0) {
                    trailers.put(LedgerLine.KEY, LedgerLine.OMITTED + ledger.omitted());
                }
            }
            super.close(status, trailers);
        }
    }
}
