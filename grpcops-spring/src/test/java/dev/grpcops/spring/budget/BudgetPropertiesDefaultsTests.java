package dev.grpcops.spring.budget;

import static org.assertj.core.api.Assertions.assertThat;

import dev.grpcops.budget.BudgetRules;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * {@code grpcops.budget.*} left unset gives the core's {@link BudgetRules#DEFAULTS} (the properties keep
 * literal values so that the generated metadata, and the docs' defaults, show them).
 */
@Timeout(30)
class BudgetPropertiesDefaultsTests {

    @Test
    void unsetBudgetPropertiesGiveTheCoresRules() {
        BudgetProperties properties = new BudgetProperties();

        assertThat(properties.getReserve()).isEqualTo(BudgetRules.DEFAULTS.reserve());
        assertThat(properties.getDefaultBudget()).isEqualTo(BudgetRules.DEFAULTS.defaultBudget());
        assertThat(properties.getMinDownstream()).isEqualTo(BudgetRules.DEFAULTS.minDownstream());
        assertThat(properties.getRetryMin()).isEqualTo(BudgetRules.DEFAULTS.retryMin());
        assertThat(properties.toRules()).isEqualTo(BudgetRules.DEFAULTS);
    }
}
