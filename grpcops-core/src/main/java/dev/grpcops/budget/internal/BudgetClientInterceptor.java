package dev.grpcops.budget.internal;

import dev.grpcops.budget.Budget;
import dev.grpcops.budget.BudgetListener;
import dev.grpcops.budget.BudgetRules;
import dev.grpcops.budget.LedgerLine;
import io.grpc.CallOptions;
import io.grpc.Channel;
import io.grpc.ClientCall;
import io.grpc.ClientInterceptor;
import io.grpc.Deadline;
import io.grpc.ForwardingClientCall;
import io.grpc.ForwardingClientCallListener;
import io.grpc.Metadata;
import io.grpc.MethodDescriptor;
import io.grpc.Status;
import java.time.Duration;
import java.util.Locale;
import java.util.concurrent.TimeUnit;

/**
 * Hands every downstream call made while serving a call the budget minus the reserve, and does
 * not send a call the budget can no longer cover: it fails at once with
 * {@code DEADLINE_EXCEEDED}, saying what was left and what was needed. Calls made outside a
 * served call keep the caller's own options. Under a warm-up call, downstream calls carry
 * {@code grpcops-warm-up: 1} on.
 */
public final class BudgetClientInterceptor implements ClientInterceptor {

    private final BudgetRules rules;
    private final BudgetListener listener;

    public BudgetClientInterceptor(BudgetRules rules, BudgetListener listener) {
        this.rules = rules;
        this.listener = listener;
    }

    @Override
    public <ReqT, RespT> ClientCall<ReqT, RespT> interceptCall(
            MethodDescriptor<ReqT, RespT> method, CallOptions options, Channel next) {
        Budget budget = Budget.currentOrNull();
        if (budget == null) {
            return next.newCall(method, options);
        }
        long remainingNanos = budget.remainingNanos();
        if (!rules.allowsCall(remainingNanos)) {
            listener.notSent(method.getFullMethodName());
            return new NotSentCall<>(Status.DEADLINE_EXCEEDED.withDescription(notSentMessage(method, remainingNanos)));
        }
        // The budget's own deadline less the reserve: remaining − reserve, without another clock read.
        Deadline deadline = budget.downstreamDeadline();
        long handedNanos = rules.downstreamNanos(remainingNanos);
        if (options.getDeadline() != null && options.getDeadline().isBefore(deadline)) {
            deadline = options.getDeadline();
            handedNanos = deadline.timeRemaining(TimeUnit.NANOSECONDS);
        }
        listener.handedDownstreamNanos(method.getFullMethodName(), handedNanos);
        ClientCall<ReqT, RespT> call = next.newCall(method, options.withDeadline(deadline));
        CallLedger ledger = CallLedger.current();
        if (ledger == null) {
            return call;
        }
        ledger.granted(handedNanos);
        return ledger.ask() == null ? call : new AskingForTheLedger<>(call, ledger);
    }

    /** Passes the caller's ask for the ledger on, and hands the lines that come back to the served call's ledger. */
    private static final class AskingForTheLedger<ReqT, RespT>
            extends ForwardingClientCall.SimpleForwardingClientCall<ReqT, RespT> {

        private final CallLedger ledger;

        AskingForTheLedger(ClientCall<ReqT, RespT> call, CallLedger ledger) {
            super(call);
            this.ledger = ledger;
        }

        @Override
        public void start(Listener<RespT> listener, Metadata headers) {
            headers.discardAll(LedgerLine.KEY);
            headers.put(LedgerLine.KEY, ledger.ask());
            super.start(
                    new ForwardingClientCallListener.SimpleForwardingClientCallListener<>(listener) {
                        @Override
                        public void onClose(Status status, Metadata trailers) {
                            try {
                                ledger.returned(trailers.getAll(LedgerLine.KEY));
                            } catch (RuntimeException e) {
                                // The ledger is for reading; it never changes how a call ends.
                            }
                            super.onClose(status, trailers);
                        }
                    },
                    headers);
        }
    }

    private String notSentMessage(MethodDescriptor<?, ?> method, long remainingNanos) {
        return String.format(
                Locale.ROOT,
                "%s not sent: budget left %.3f s, minus reserve %.3f s = %.3f s, below the %.3f s needed downstream"
                        + " (the min-downstream rule)",
                method.getFullMethodName(),
                remainingNanos / 1e9,
                seconds(rules.reserve()),
                rules.downstreamNanos(remainingNanos) / 1e9,
                seconds(rules.minDownstream()));
    }

    private static double seconds(Duration duration) {
        return duration.toNanos() / 1e9;
    }
}
