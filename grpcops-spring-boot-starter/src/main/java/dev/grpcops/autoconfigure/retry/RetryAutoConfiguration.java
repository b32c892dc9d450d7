package dev.grpcops.autoconfigure.retry;

import dev.grpcops.autoconfigure.GrpcopsInterceptorOrder;
import dev.grpcops.retry.Retry;
import dev.grpcops.spring.retry.RetryConfiguration;
import io.grpc.ClientInterceptor;
import net.devh.boot.grpc.client.interceptor.GrpcGlobalClientInterceptor;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.context.annotation.Import;
import org.springframework.core.annotation.Order;

/**
 * {@link Retry} for services that call downstream: once, on {@code UNAVAILABLE}, within the deadline
 * budget, limited per target by a token bucket and a retry budget ({@code grpcops.retry.limiter.*});
 * hedged calls also get a second attempt on another replica after a learned delay
 * ({@code grpcops.retry.hedging.*}), paid from the same limiter;
 * and the client interceptor every channel needs so that attempts are accounted to their target and
 * extra attempts are marked for the next hop. Every bean backs off when the application defines its own.
 * Bad settings stop the start, naming the property.
 */
@AutoConfiguration(
        afterName = {
            "dev.grpcops.autoconfigure.budget.BudgetAutoConfiguration",
            "org.springframework.boot.actuate.autoconfigure.metrics.CompositeMeterRegistryAutoConfiguration"
        })
@Import(RetryConfiguration.class)
public class RetryAutoConfiguration {

    @Configuration(proxyBeanMethods = false)
    @ConditionalOnClass(GrpcGlobalClientInterceptor.class)
    static class ClientSide {

        /** On every channel, whether or not the deadline budget is on: each target keeps its own limits. */
        @Bean
        @ConditionalOnMissingBean(name = "grpcopsRetryAttemptInterceptor")
        @GrpcGlobalClientInterceptor
        @Order(GrpcopsInterceptorOrder.RETRY_ATTEMPTS)
        ClientInterceptor grpcopsRetryAttemptInterceptor() {
            return Retry.clientInterceptor();
        }
    }
}
