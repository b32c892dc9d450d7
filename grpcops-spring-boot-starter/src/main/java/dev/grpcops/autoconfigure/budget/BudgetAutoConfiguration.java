package dev.grpcops.autoconfigure.budget;

import dev.grpcops.budget.BudgetListener;
import dev.grpcops.budget.BudgetRetry;
import dev.grpcops.budget.BudgetRules;
import dev.grpcops.budget.RetryGovernor;
import dev.grpcops.budget.RetryThrottling;
import dev.grpcops.budget.internal.BudgetClientInterceptor;
import dev.grpcops.budget.internal.BudgetServerInterceptor;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.composite.CompositeMeterRegistry;
import java.util.HashSet;
import net.devh.boot.grpc.client.interceptor.GrpcGlobalClientInterceptor;
import net.devh.boot.grpc.server.interceptor.GrpcGlobalServerInterceptor;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnProperty;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.core.annotation.Order;
import net.devh.boot.grpc.common.util.InterceptorOrder;

/**
 * Deadline budgets for a net.devh gRPC service: the server half (every served call gets a budget)
 * switches on with the server starter, the client half (every downstream call is held to it) with
 * the client starter. Every bean backs off when the application defines its own.
 * {@code grpcops.budget.enabled=false} switches off the two halves, not {@link BudgetRetry}: code that
 * retries through it keeps working, under a fresh default budget per call.
 */
@AutoConfiguration(afterName = "org.springframework.boot.actuate.autoconfigure.metrics.CompositeMeterRegistryAutoConfiguration")
@EnableConfigurationProperties(BudgetProperties.class)
public class BudgetAutoConfiguration {

    @Bean
    @ConditionalOnMissingBean
    BudgetRules budgetRules(BudgetProperties properties) {
        return properties.toRules();
    }

    @Bean
    @ConditionalOnMissingBean
    BudgetListener budgetListener(ObjectProvider<MeterRegistry> registry) {
        // Without Micrometer configured, an empty composite registry records nothing.
        return new MicrometerBudgetListener(registry.getIfAvailable(CompositeMeterRegistry::new));
    }

    @Bean
    @ConditionalOnMissingBean
    RetryThrottling retryThrottling(BudgetProperties properties) {
        return properties.getRetry().toThrottling();
    }

    @Bean
    @ConditionalOnMissingBean
    BudgetRetry budgetRetry(BudgetRules rules, RetryThrottling throttling, BudgetListener listener,
            BudgetProperties properties) {
        if (!properties.getRetry().isEnabled()) {
            return new BudgetRetry(rules, RetryGovernor.notEnforcing(throttling, System::nanoTime, listener), listener,
                    BudgetRetry.sharedScheduler());
        }
        return new BudgetRetry(rules, throttling, listener);
    }

    @Configuration(proxyBeanMethods = false)
    @ConditionalOnClass(GrpcGlobalServerInterceptor.class)
    @ConditionalOnProperty(prefix = "grpcops.budget", name = "enabled", matchIfMissing = true)
    static class ServerSide {

        /**
         * Before admission (which runs at ORDER_TRACING_METRICS + 100): a call without a deadline
         * gets its default budget when it arrives, not when it leaves admission's queue, and
         * admission holds its wait to that budget.
         */
        @Bean
        @ConditionalOnMissingBean
        @GrpcGlobalServerInterceptor
        @Order(InterceptorOrder.ORDER_TRACING_METRICS + 50)
        BudgetServerInterceptor budgetServerInterceptor(BudgetRules rules, BudgetListener listener,
                BudgetProperties properties) {
            return new BudgetServerInterceptor(rules, listener, new HashSet<>(properties.getExcludedServices()));
        }
    }

    @Configuration(proxyBeanMethods = false)
    @ConditionalOnClass(GrpcGlobalClientInterceptor.class)
    @ConditionalOnProperty(prefix = "grpcops.budget", name = "enabled", matchIfMissing = true)
    static class ClientSide {

        @Bean
        @ConditionalOnMissingBean
        @GrpcGlobalClientInterceptor
        BudgetClientInterceptor budgetClientInterceptor(BudgetRules rules, BudgetListener listener) {
            return new BudgetClientInterceptor(rules, listener);
        }
    }
}
