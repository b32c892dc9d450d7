package dev.grpcops.autoconfigure.budget;

import dev.grpcops.admin.AdminTokens;
import dev.grpcops.autoconfigure.GrpcopsInterceptorOrder;
import dev.grpcops.budget.BudgetInterceptors;
import dev.grpcops.budget.BudgetListener;
import dev.grpcops.budget.BudgetRules;
import io.grpc.ClientInterceptor;
import io.grpc.ServerInterceptor;
import io.micrometer.core.instrument.MeterRegistry;
import java.util.HashSet;
import net.devh.boot.grpc.client.interceptor.GrpcGlobalClientInterceptor;
import net.devh.boot.grpc.server.interceptor.GrpcGlobalServerInterceptor;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnProperty;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.core.annotation.Order;
import org.springframework.core.env.Environment;

/**
 * Deadline budgets for a net.devh gRPC service: the server half (every served call gets a budget)
 * switches on with the server starter, the client half (every downstream call is held to it) with
 * the client starter. Every bean backs off when the application defines its own (the interceptors
 * by bean name). {@code grpcops.budget.enabled=false} switches off the two halves; retries made
 * through {@code Retry} keep working, under a fresh default budget per call.
 */
@AutoConfiguration(
        afterName = "org.springframework.boot.actuate.autoconfigure.metrics.CompositeMeterRegistryAutoConfiguration")
@EnableConfigurationProperties(BudgetProperties.class)
public class BudgetAutoConfiguration {

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

    @Configuration(proxyBeanMethods = false)
    @ConditionalOnClass(GrpcGlobalServerInterceptor.class)
    @ConditionalOnProperty(prefix = "grpcops.budget", name = "enabled", matchIfMissing = true)
    static class ServerSide {

        /**
         * Before admission: a call without a deadline gets its default budget when it arrives, not
         * when it leaves admission's queue, and admission holds its wait to that budget.
         */
        @Bean
        @ConditionalOnMissingBean(name = "grpcopsBudgetServerInterceptor")
        @GrpcGlobalServerInterceptor
        @Order(GrpcopsInterceptorOrder.BUDGET)
        ServerInterceptor grpcopsBudgetServerInterceptor(BudgetInterceptors interceptors) {
            return interceptors.server();
        }
    }

    @Configuration(proxyBeanMethods = false)
    @ConditionalOnClass(GrpcGlobalClientInterceptor.class)
    @ConditionalOnProperty(prefix = "grpcops.budget", name = "enabled", matchIfMissing = true)
    static class ClientSide {

        @Bean
        @ConditionalOnMissingBean(name = "grpcopsBudgetClientInterceptor")
        @GrpcGlobalClientInterceptor
        @Order(GrpcopsInterceptorOrder.BUDGET_CLIENT)
        ClientInterceptor grpcopsBudgetClientInterceptor(BudgetInterceptors interceptors) {
            return interceptors.client();
        }
    }
}
