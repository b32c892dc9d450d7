package dev.grpcops.autoconfigure.budget;

import dev.grpcops.autoconfigure.GrpcopsInterceptorOrder;
import dev.grpcops.budget.BudgetInterceptors;
import dev.grpcops.spring.budget.BudgetConfiguration;
import io.grpc.ClientInterceptor;
import io.grpc.ServerInterceptor;
import net.devh.boot.grpc.client.interceptor.GrpcGlobalClientInterceptor;
import net.devh.boot.grpc.server.interceptor.GrpcGlobalServerInterceptor;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnProperty;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.context.annotation.Import;
import org.springframework.core.annotation.Order;

/**
 * Deadline budgets for a net.devh gRPC service ({@link BudgetConfiguration}'s beans): the server half (every served call gets a budget)
 * switches on with the server starter, the client half (every downstream call is held to it) with
 * the client starter. Every bean backs off when the application defines its own (the interceptors
 * by bean name). {@code grpcops.budget.enabled=false} switches off the two halves; retries made
 * through {@code Retry} keep working, under a fresh default budget per call.
 */
@AutoConfiguration(
        afterName = "org.springframework.boot.actuate.autoconfigure.metrics.CompositeMeterRegistryAutoConfiguration")
@Import(BudgetConfiguration.class)
public class BudgetAutoConfiguration {

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
