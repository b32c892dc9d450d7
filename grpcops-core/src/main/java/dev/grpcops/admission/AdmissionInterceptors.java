package dev.grpcops.admission;

import dev.grpcops.InfrastructureServices;
import dev.grpcops.admission.internal.AdmissionServerInterceptor;
import dev.grpcops.admission.internal.CallerForwardingInterceptor;
import dev.grpcops.budget.BudgetRules;
import io.grpc.ClientInterceptor;
import io.grpc.ServerInterceptor;
import java.time.Duration;
import java.util.Objects;
import java.util.Set;

/**
 * Fair admission on a plain grpc-java service: the server interceptor admits every call through an
 * {@link Admission} before any later interceptor or handler runs, and the client interceptor
 * forwards the caller on every downstream call made while serving, so the next hop queues the end
 * caller.
 *
 * <pre>{@code
 * Admission admission = Admission.builder(config).listener(metrics).build();
 * ServerInterceptor admit = AdmissionInterceptors.server(admission).callsDownstream(BudgetRules.DEFAULTS).build();
 * ServerInterceptors.intercept(service, admit, budget.server());     // the budget first (the last listed runs first), then admission
 * ManagedChannelBuilder.forTarget(...).intercept(AdmissionInterceptors.callerForwarding());
 * }</pre>
 */
public final class AdmissionInterceptors {

    private AdmissionInterceptors() {}

    /** The server interceptor for {@code admission}: callers by criticality, health and reflection exempt. */
    public static ServerBuilder server(Admission admission) {
        return new ServerBuilder(admission);
    }

    /** Sends the served call's caller, and the criticality it was granted, with every downstream call. */
    public static ClientInterceptor callerForwarding() {
        return new CallerForwardingInterceptor();
    }

    /** Who is admitted how, and what a call needs besides waiting. */
    public static final class ServerBuilder {

        private final Admission admission;
        private CallerPolicy policy = CallerPolicy.byCriticality();
        private Set<String> exemptServices = Set.copyOf(InfrastructureServices.NAMES);
        private Set<String> exemptMethods = Set.of();
        private Duration defaultBudget = BudgetRules.DEFAULTS.defaultBudget();
        private Duration needed = Duration.ZERO;
        private Duration downstreamSetAside = Duration.ZERO;
        private final java.util.Map<String, CallWidth<?>> widths = new java.util.HashMap<>();
        private java.util.concurrent.Executor executor;

        private ServerBuilder(Admission admission) {
            this.admission = Objects.requireNonNull(admission, "admission");
        }

        /** Turns headers into callers and levels; by default the level named after the criticality, uncapped. */
        public ServerBuilder policy(CallerPolicy policy) {
            this.policy = Objects.requireNonNull(policy, "policy");
            return this;
        }

        /** Services never queued nor rejected; health and reflection by default. */
        public ServerBuilder exemptServices(Set<String> exemptServices) {
            this.exemptServices = Set.copyOf(exemptServices);
            return this;
        }

        /** Methods (full names) never queued nor rejected, e.g. admin methods; none by default. */
        public ServerBuilder exemptMethods(Set<String> exemptMethods) {
            this.exemptMethods = Set.copyOf(exemptMethods);
            return this;
        }

        /** {@code methods} (full names) never queued nor rejected either, besides those exempt already. */
        public ServerBuilder alsoExempt(Set<String> methods) {
            Set<String> union = new java.util.HashSet<>(exemptMethods);
            union.addAll(methods);
            this.exemptMethods = Set.copyOf(union);
            return this;
        }

        /**
         * For a service that calls downstream: a queued call must still have reserve + min-downstream
         * of its budget left after its predicted wait, and a call without a deadline is assumed to
         * have the rules' default budget (when the budget interceptor has not given it one).
         */
        public ServerBuilder callsDownstream(BudgetRules rules) {
            this.defaultBudget = rules.defaultBudget();
            this.needed = rules.reserve().plus(rules.minDownstream());
            this.downstreamSetAside = rules.minDownstream();
            return this;
        }

        /** What a call without a deadline is assumed to have, when no budget interceptor ran first; 2 s by default. */
        public ServerBuilder defaultBudget(Duration defaultBudget) {
            this.defaultBudget = Objects.requireNonNull(defaultBudget, "defaultBudget");
            return this;
        }

        /** Calls of {@code width}'s method take as many seats as it reads from their request; 1 each by default. */
        public ServerBuilder width(CallWidth<?> width) {
            widths.put(width.fullMethodName(), width);
            return this;
        }

        /**
         * The executor the server runs handlers on (the one given to {@code ServerBuilder.executor}):
         * a call that waited for its seat starts on it, not on the thread that freed the seat
         * (another call's, or a client's event loop). None (the default, and right for a server on
         * grpc-java's direct executor, whose handlers never block): it starts on that thread.
         */
        public ServerBuilder executor(java.util.concurrent.Executor executor) {
            this.executor = Objects.requireNonNull(executor, "executor");
            return this;
        }

        public ServerInterceptor build() {
            return new AdmissionServerInterceptor(
                    admission,
                    policy,
                    exemptServices,
                    exemptMethods,
                    defaultBudget,
                    BudgetRules.NO_DEADLINE_BEYOND,
                    needed,
                    downstreamSetAside,
                    java.util.Map.copyOf(widths),
                    admission.nanoClock(),
                    executor);
        }
    }
}
