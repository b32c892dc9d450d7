package dev.grpcops.springgrpc.retry;

import dev.grpcops.retry.Retry;
import dev.grpcops.spring.retry.RetryConfiguration;
import dev.grpcops.springgrpc.GrpcopsInterceptorOrder;
import io.grpc.ClientInterceptor;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.context.annotation.Import;
import org.springframework.core.annotation.Order;
import org.springframework.grpc.client.GlobalClientInterceptor;

/**
 * {@link Retry} for services that call downstream ({@link RetryConfiguration}'s beans), and on every
 * channel the interceptor that accounts attempts to their target and marks extra attempts for the
 * next hop.
 */
@AutoConfiguration(afterName = {"dev.grpcops.springgrpc.budget.BudgetAutoConfiguration", "org.springframework.boot.micrometer.metrics.autoconfigure.CompositeMeterRegistryAutoConfiguration"})
@Import(RetryConfiguration.class)
public class RetryAutoConfiguration {

    @Configuration(proxyBeanMethods = false)
    @ConditionalOnClass(name = "org.springframework.boot.grpc.client.autoconfigure.GrpcClientAutoConfiguration")
    static class ClientSide {

        @Bean
        @ConditionalOnMissingBean(name = "grpcopsRetryAttemptInterceptor")
        @GlobalClientInterceptor
        @Order(GrpcopsInterceptorOrder.RETRY_ATTEMPTS)
        ClientInterceptor grpcopsRetryAttemptInterceptor() {
            return Retry.clientInterceptor();
        }
    }
}
