package dev.grpcops.spring.budget;

import dev.grpcops.InfrastructureServices;
import dev.grpcops.budget.BudgetRules;
import dev.grpcops.budget.InvalidBudgetRulesException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.springframework.boot.context.properties.ConfigurationProperties;

/** The deadline-budget rules, under {@code grpcops.budget}. */
@ConfigurationProperties("grpcops.budget")
public class BudgetProperties {

    /** Whether served calls get a budget and downstream calls are held to it (retries keep working either way). */
    private boolean enabled = true;

    /** What a hop keeps for itself: a downstream call's deadline is the remaining budget minus this. */
    private Duration reserve = Duration.ofMillis(200);

    /** Budget assumed for a call that arrives with no deadline (or one more than 10^6 s away). */
    private Duration defaultBudget = Duration.ofSeconds(2);

    /** Smallest downstream deadline worth sending; below it the call fails at once with DEADLINE_EXCEEDED. */
    private Duration minDownstream = Duration.ofMillis(300);

    /** Smallest downstream budget, recomputed at that moment, for which a call that failed with UNAVAILABLE is retried once. */
    private Duration retryMin = Duration.ofMillis(700);

    /** Services whose calls get no budget: long-lived streams such as health Watch and reflection. */
    private List<String> excludedServices = new ArrayList<>(InfrastructureServices.NAMES);

    /** Who may read a call's budget ledger ({@code grpcops call --ledger}). */
    private final Ledger ledger = new Ledger();

    /** Where the ledger token comes from, as every refusal names it. */
    static final String LEDGER_TOKEN_SOURCE = "grpcops.budget.ledger.token (env GRPCOPS_BUDGET_LEDGER_TOKEN)";

    public Ledger getLedger() {
        return ledger;
    }

    /** The budget ledger a caller gets back in the trailers when it asks with the ledger token. */
    public static class Ledger {

        /**
         * The secret a caller sends as metadata "x-grpcops-ledger: <token>" to get every hop's
         * ledger line back (env GRPCOPS_BUDGET_LEDGER_TOKEN), e.g. the output of "openssl rand -hex
         * 32"; it is passed on to the hops downstream. Never the admin token. Unset: no ledger is
         * sent. A known placeholder or fewer than 16 characters: the service refuses to start.
         */
        private String token;

        public String getToken() {
            return token;
        }

        public void setToken(String token) {
            this.token = token;
        }
    }

    /** The core's rules; a rule out of range is refused naming its property. */
    public BudgetRules toRules() {
        try {
            return BudgetRules.builder()
                    .reserve(reserve)
                    .defaultBudget(defaultBudget)
                    .minDownstream(minDownstream)
                    .retryMin(retryMin)
                    .build();
        } catch (InvalidBudgetRulesException e) {
            // The core names the rule; the property is what the operator wrote.
            throw new IllegalArgumentException("grpcops.budget." + e.getMessage());
        }
    }

    public boolean isEnabled() {
        return enabled;
    }

    public void setEnabled(boolean enabled) {
        this.enabled = enabled;
    }

    public Duration getReserve() {
        return reserve;
    }

    public void setReserve(Duration reserve) {
        this.reserve = reserve;
    }

    public Duration getDefaultBudget() {
        return defaultBudget;
    }

    public void setDefaultBudget(Duration defaultBudget) {
        this.defaultBudget = defaultBudget;
    }

    public Duration getMinDownstream() {
        return minDownstream;
    }

    public void setMinDownstream(Duration minDownstream) {
        this.minDownstream = minDownstream;
    }

    public Duration getRetryMin() {
        return retryMin;
    }

    public void setRetryMin(Duration retryMin) {
        this.retryMin = retryMin;
    }

    public List<String> getExcludedServices() {
        return excludedServices;
    }

    public void setExcludedServices(List<String> excludedServices) {
        this.excludedServices = excludedServices;
    }
}
