package dev.grpcops.autoconfigure.budget;

import dev.grpcops.budget.BudgetRules;
import dev.grpcops.budget.RetryThrottling;
import dev.grpcops.lifecycle.InfrastructureServices;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.springframework.boot.context.properties.ConfigurationProperties;

/** The deadline-budget rules (SPEC §4), under {@code grpcops.budget}. */
@ConfigurationProperties("grpcops.budget")
public class BudgetProperties {

    /** Whether served calls get a budget and downstream calls are held to it (BudgetRetry stays either way). */
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

    /** The retry governor (SPEC §11): per downstream target, a gRFC A6 token bucket and a ratio retry budget. */
    private final Retry retry = new Retry();

    BudgetRules toRules() {
        return new BudgetRules(reserve, defaultBudget, minDownstream, retryMin);
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

    public Retry getRetry() {
        return retry;
    }

    public List<String> getExcludedServices() {
        return excludedServices;
    }

    public void setExcludedServices(List<String> excludedServices) {
        this.excludedServices = excludedServices;
    }

    /** {@code grpcops.budget.retry.*}: what a retry needs from its target on top of retry-min. */
    public static class Retry {

        /** Whether the token bucket and the retry budget are enforced; when false they are only measured (the gauge still moves). */
        private boolean enabled = true;

        /** gRFC A6 maxTokens: an UNAVAILABLE (or pushed-back) attempt costs 1 token, retries stop while tokens are at or below half. */
        private int maxTokens = RetryThrottling.DEFAULTS.maxTokens();

        /** gRFC A6 tokenRatio: what each successful attempt puts back in the bucket. */
        private double tokenRatio = RetryThrottling.DEFAULTS.tokenRatio();

        /** Retries may be at most this percentage of the calls of the last budget-window (plus the floor). */
        private double budgetPercent = RetryThrottling.DEFAULTS.budgetPercent();

        /** The window the retry budget counts calls and retries over. */
        private Duration budgetWindow = RetryThrottling.DEFAULTS.budgetWindow();

        /** The retry budget's floor: retries per second of the window allowed on top of the percentage. */
        private double minRetriesPerSecond = RetryThrottling.DEFAULTS.minRetriesPerSecond();

        RetryThrottling toThrottling() {
            return new RetryThrottling(maxTokens, tokenRatio, budgetPercent, budgetWindow, minRetriesPerSecond);
        }

        public boolean isEnabled() {
            return enabled;
        }

        public void setEnabled(boolean enabled) {
            this.enabled = enabled;
        }

        public int getMaxTokens() {
            return maxTokens;
        }

        public void setMaxTokens(int maxTokens) {
            this.maxTokens = maxTokens;
        }

        public double getTokenRatio() {
            return tokenRatio;
        }

        public void setTokenRatio(double tokenRatio) {
            this.tokenRatio = tokenRatio;
        }

        public double getBudgetPercent() {
            return budgetPercent;
        }

        public void setBudgetPercent(double budgetPercent) {
            this.budgetPercent = budgetPercent;
        }

        public Duration getBudgetWindow() {
            return budgetWindow;
        }

        public void setBudgetWindow(Duration budgetWindow) {
            this.budgetWindow = budgetWindow;
        }

        public double getMinRetriesPerSecond() {
            return minRetriesPerSecond;
        }

        public void setMinRetriesPerSecond(double minRetriesPerSecond) {
            this.minRetriesPerSecond = minRetriesPerSecond;
        }
    }
}
