package dev.grpcops.budget;

import dev.grpcops.InfrastructureServices;
import dev.grpcops.budget.internal.BudgetClientInterceptor;
import dev.grpcops.budget.internal.BudgetServerInterceptor;
import io.grpc.ClientInterceptor;
import io.grpc.ServerInterceptor;
import java.util.Objects;
import java.util.Set;

/**
 * The two interceptors that put the deadline budget to work on a plain grpc-java service: the
 * server's gives every served call its {@link Budget} (the caller's deadline, or the default), the
 * channels' hand every downstream call made while serving remaining − reserve, or fail it at once
 * with {@code DEADLINE_EXCEEDED} when that is below min-downstream.
 *
 * <pre>{@code
 * BudgetInterceptors budget = BudgetInterceptors.builder(BudgetRules.DEFAULTS).listener(metrics).build();
 * ManagedChannel stock = ManagedChannelBuilder.forTarget("dns:///stock:50061").intercept(budget.client()).build();
 * Server server = ServerBuilder.forPort(50062)
 *         .addService(ServerInterceptors.intercept(new PricingService(stock), budget.server())).build();
 * }</pre>
 */
public final class BudgetInterceptors {

    private final ServerInterceptor server;
    private final ClientInterceptor client;

    private BudgetInterceptors(Builder builder) {
        this.server = new BudgetServerInterceptor(
                builder.rules, builder.listener, builder.excludedServices, builder.ledgerToken);
        this.client = new BudgetClientInterceptor(builder.rules, builder.listener);
    }

    public static Builder builder(BudgetRules rules) {
        return new Builder(rules);
    }

    /** For the server: gives every served call (but those of excluded services) its budget. */
    public ServerInterceptor server() {
        return server;
    }

    /** For every channel that calls downstream while serving: holds each call to the budget. */
    public ClientInterceptor client() {
        return client;
    }

    /** The rules, and what the interceptors tell and leave alone. */
    public static final class Builder {

        private final BudgetRules rules;
        private BudgetListener listener = BudgetListener.NONE;
        private Set<String> excludedServices = Set.copyOf(InfrastructureServices.NAMES);
        private String ledgerToken;

        private Builder(BudgetRules rules) {
            this.rules = Objects.requireNonNull(rules, "rules");
        }

        /** Told of every arrival, downstream deadline and call not sent (metrics); nothing by default. */
        public Builder listener(BudgetListener listener) {
            this.listener = Objects.requireNonNull(listener, "listener");
            return this;
        }

        /**
         * Services whose calls get no budget: long-lived streams such as health {@code Watch}, which
         * would otherwise count as calls without a deadline. Health and reflection by default.
         */
        public Builder excludedServices(Set<String> excludedServices) {
            this.excludedServices = Set.copyOf(excludedServices);
            return this;
        }

        /**
         * The token a caller presents as {@link LedgerLine#HEADER} to get the call's budget ledger in
         * the trailers: this hop's line and those its downstream calls return (the ask is passed on
         * to them, so every hop that holds the same token adds its line). A secret of its own, never
         * the admin token: it travels to every hop downstream, and reading a ledger must not let
         * anyone drain a pod. Wrong tokens are limited per caller address as refused admin calls are
         * ({@link dev.grpcops.admin.AdminRateLimit#DEFAULTS}). None (the default): the ledger goes
         * only to the listener.
         */
        public Builder ledgerToken(String token) {
            this.ledgerToken = token;
            return this;
        }

        /**
         * @throws dev.grpcops.admin.AdminTokens.UnusableAdminTokenException if the ledger token is a
         *     placeholder or too short to be a secret
         */
        public BudgetInterceptors build() {
            dev.grpcops.admin.AdminTokens.requireUsable(ledgerToken, "the ledger token");
            return new BudgetInterceptors(this);
        }
    }
}
