package dev.grpcops.autoconfigure.deadline;

import dev.grpcops.InfrastructureServices;
import dev.grpcops.deadline.BudgetRules;
import dev.grpcops.deadline.InvalidBudgetRulesException;
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
    private Duration reserve = BudgetRules.DEFAULTS.reserve();

    /** Budget assumed for a call that arrives with no deadline (or one more than 10^6 s away). */
    private Duration defaultBudget = BudgetRules.DEFAULTS.defaultBudget();

    /** Smallest downstream deadline worth sending; below it the call fails at once with DEADLINE_EXCEEDED. */
    private Duration minDownstream = BudgetRules.DEFAULTS.minDownstream();

    /** Smallest downstream budget, recomputed at that moment, for which a call that failed with UNAVAILABLE is retried once. */
    private Duration retryMin = BudgetRules.DEFAULTS.retryMin();

    /** Services whose calls get no budget: long-lived streams such as health Watch and reflection. */
    private List<String> excludedServices = new ArrayList<>(InfrastructureServices.NAMES);

    /** The core's rules; a rule out of range is refused naming its property. */
    BudgetRules toRules() {
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
