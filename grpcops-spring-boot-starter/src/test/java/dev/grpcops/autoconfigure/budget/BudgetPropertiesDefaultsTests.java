package dev.grpcops.autoconfigure.budget;

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

        assertThat(properties.getReserve()).isEqualTo(BudgetRules.DEFAULT_RESERVE);
        assertThat(properties.getDefaultBudget()).isEqualTo(BudgetRules.DEFAULT_BUDGET);
        assertThat(properties.getMinDownstream()).isEqualTo(BudgetRules.DEFAULT_MIN_DOWNSTREAM);
        assertThat(properties.getRetryMin()).isEqualTo(BudgetRules.DEFAULT_RETRY_MIN);
        assertThat(properties.toRules()).isEqualTo(BudgetRules.DEFAULTS);
    }
}
