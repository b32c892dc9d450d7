package dev.grpcops.springgrpc.budget;

import dev.grpcops.budget.BudgetInterceptors;
import dev.grpcops.spring.budget.BudgetConfiguration;
import dev.grpcops.springgrpc.GrpcopsInterceptorOrder;
import io.grpc.ClientInterceptor;
import io.grpc.ServerInterceptor;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnProperty;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.context.annotation.Import;
import org.springframework.core.annotation.Order;
import org.springframework.grpc.client.GlobalClientInterceptor;
import org.springframework.grpc.server.GlobalServerInterceptor;

/**
 * Deadline budgets for a Spring gRPC service ({@link BudgetConfiguration}'s beans): the server half
 * (every served call gets a budget) switches on with Spring gRPC's server, the client half (every
 * downstream call is held to it) with its client. The interceptors back off by bean name when the
 * application defines its own; {@code grpcops.budget.enabled=false} switches off both halves.
 */
@AutoConfiguration(afterName = "org.springframework.boot.micrometer.metrics.autoconfigure.CompositeMeterRegistryAutoConfiguration")
@Import(BudgetConfiguration.class)
public class BudgetAutoConfiguration {

    @Configuration(proxyBeanMethods = false)
    @ConditionalOnClass(name = "org.springframework.boot.grpc.server.autoconfigure.GrpcServerAutoConfiguration")
    @ConditionalOnProperty(prefix = "grpcops.budget", name = "enabled", matchIfMissing = true)
    static class ServerSide {

        /** Before admission: a call without a deadline gets its default budget when it arrives. */
        @Bean
        @ConditionalOnMissingBean(name = "grpcopsBudgetServerInterceptor")
        @GlobalServerInterceptor
        @Order(GrpcopsInterceptorOrder.BUDGET)
        ServerInterceptor grpcopsBudgetServerInterceptor(BudgetInterceptors interceptors) {
            return interceptors.server();
        }
    }

    @Configuration(proxyBeanMethods = false)
    @ConditionalOnClass(name = "org.springframework.boot.grpc.client.autoconfigure.GrpcClientAutoConfiguration")
    @ConditionalOnProperty(prefix = "grpcops.budget", name = "enabled", matchIfMissing = true)
    static class ClientSide {

        @Bean
        @ConditionalOnMissingBean(name = "grpcopsBudgetClientInterceptor")
        @GlobalClientInterceptor
        @Order(GrpcopsInterceptorOrder.BUDGET_CLIENT)
        ClientInterceptor grpcopsBudgetClientInterceptor(BudgetInterceptors interceptors) {
            return interceptors.client();
        }
    }
}
