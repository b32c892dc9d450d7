package dev.grpcops.spring.budget;

import dev.grpcops.admin.AdminTokens;
import dev.grpcops.budget.BudgetInterceptors;
import dev.grpcops.budget.BudgetListener;
import dev.grpcops.budget.BudgetRules;
import io.micrometer.core.instrument.MeterRegistry;
import java.util.HashSet;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.core.env.Environment;

/**
 * Deadline budgets' beans, whichever gRPC integration registers their interceptors: the {@link
 * BudgetRules} of {@code grpcops.budget.*}, the listener (Micrometer's when a meter registry is
 * there) and the {@link BudgetInterceptors}. Imported by each starter's budget auto-configuration,
 * which registers {@link BudgetInterceptors#server()} and {@link BudgetInterceptors#client()} as its
 * integration's global interceptors. Every bean backs off when the application defines its own.
 */
@Configuration(proxyBeanMethods = false)
@EnableConfigurationProperties(BudgetProperties.class)
public class BudgetConfiguration {

    @Bean
    @ConditionalOnMissingBean
    BudgetRules budgetRules(BudgetProperties properties) {
        return properties.toRules();
    }

    @Configuration(proxyBeanMethods = false)
    @ConditionalOnBean(MeterRegistry.class)
    static class Metrics {

        @Bean
        @ConditionalOnMissingBean
        BudgetListener micrometerBudgetListener(MeterRegistry registry) {
            return new MicrometerBudgetListener(registry);
        }
    }

    @Bean
    @ConditionalOnMissingBean
    BudgetListener budgetListener() {
        return BudgetListener.NONE;
    }

    @Bean
    @ConditionalOnMissingBean
    BudgetInterceptors budgetInterceptors(
            BudgetRules rules, BudgetListener listener, BudgetProperties properties, Environment environment) {
        String ledgerToken =
                AdminTokens.requireUsable(properties.getLedger().getToken(), BudgetProperties.LEDGER_TOKEN_SOURCE);
        String adminToken = environment.getProperty("grpcops.admin.token");
        if (ledgerToken != null && adminToken != null && ledgerToken.equals(adminToken.strip())) {
            // It is passed on to every hop downstream: reading a ledger must not let anyone drain a pod.
            throw new IllegalArgumentException(BudgetProperties.LEDGER_TOKEN_SOURCE
                    + " is the admin token: give the ledger a secret of its own (openssl rand -hex 32)");
        }
        return BudgetInterceptors.builder(rules)
                .listener(listener)
                .excludedServices(new HashSet<>(properties.getExcludedServices()))
                .ledgerToken(ledgerToken)
                .build();
    }
}
