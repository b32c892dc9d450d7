package dev.grpcops.autoconfigure.retry;

import dev.grpcops.autoconfigure.GrpcopsInterceptorOrder;
import dev.grpcops.budget.BudgetRules;
import dev.grpcops.retry.Hedging;
import dev.grpcops.retry.Retry;
import dev.grpcops.retry.RetryBudget;
import dev.grpcops.retry.RetryLimiter;
import dev.grpcops.retry.RetryListener;
import dev.grpcops.retry.TokenBucket;
import io.grpc.ClientInterceptor;
import io.micrometer.core.instrument.MeterRegistry;
import java.util.function.Supplier;
import net.devh.boot.grpc.client.interceptor.GrpcGlobalClientInterceptor;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
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
@EnableConfigurationProperties(RetryProperties.class)
public class RetryAutoConfiguration {

    static final String PREFIX = "grpcops.retry.limiter.";

    @Configuration(proxyBeanMethods = false)
    @ConditionalOnBean(MeterRegistry.class)
    static class Metrics {

        @Bean
        @ConditionalOnMissingBean
        RetryListener micrometerRetryListener(MeterRegistry registry) {
            return new MicrometerRetryListener(registry);
        }
    }

    @Bean
    @ConditionalOnMissingBean
    RetryListener retryListener() {
        return RetryListener.NONE;
    }

    @Bean
    @ConditionalOnMissingBean
    RetryLimiter retryLimiter(RetryProperties properties, RetryListener listener) {
        RetryProperties.Limiter limiter = properties.getLimiter();
        if (!limiter.isEnabled()) {
            return RetryLimiter.unlimited();
        }
        return named(() -> RetryLimiter.allOf(
                TokenBucket.builder()
                        .maxTokens(limiter.getMaxTokens())
                        .tokenRatio(limiter.getTokenRatio())
                        .listener(listener)
                        .build(),
                RetryBudget.builder()
                        .percent(limiter.getBudgetPercent())
                        .window(limiter.getBudgetWindow())
                        .minPerSecond(limiter.getMinRetriesPerSecond())
                        .build()));
    }

    @Bean
    @ConditionalOnMissingBean
    Retry retry(BudgetRules rules, RetryLimiter limiter, RetryListener listener, RetryProperties properties) {
        RetryProperties.Hedging hedging = properties.getHedging();
        Hedging rulesOfHedging;
        try {
            rulesOfHedging = hedging.isEnabled() ? hedging.toHedging() : null;
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException("grpcops.retry.hedging." + e.getMessage());
        }
        return Retry.builder(rules)
                .limiter(limiter)
                .listener(listener)
                .hedging(rulesOfHedging)
                .build();
    }

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

    /** The core names the setting; the property is what the operator wrote. */
    private static <T> T named(Supplier<T> build) {
        try {
            return build.get();
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException(PREFIX + e.getMessage());
        }
    }
}
