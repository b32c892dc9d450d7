package dev.grpcops.spring.retry;

import dev.grpcops.budget.BudgetRules;
import dev.grpcops.retry.Hedging;
import dev.grpcops.retry.Retry;
import dev.grpcops.retry.RetryBudget;
import dev.grpcops.retry.RetryLimiter;
import dev.grpcops.retry.RetryListener;
import dev.grpcops.retry.TokenBucket;
import io.micrometer.core.instrument.MeterRegistry;
import java.util.function.Supplier;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/**
 * {@link Retry}'s beans, whichever gRPC integration registers the attempt interceptor: the limiter
 * of {@code grpcops.retry.limiter.*} (a token bucket and a retry budget per target), hedging
 * ({@code grpcops.retry.hedging.*}), the listener (Micrometer's when a meter registry is there).
 * Imported by each starter's retry auto-configuration, which registers {@link
 * Retry#clientInterceptor()} on every channel. Every bean backs off when the application defines
 * its own; bad settings stop the start, naming the property.
 */
@Configuration(proxyBeanMethods = false)
@EnableConfigurationProperties(RetryProperties.class)
public class RetryConfiguration {

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

    /** The core names the setting; the property is what the operator wrote. */
    private static <T> T named(Supplier<T> build) {
        try {
            return build.get();
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException(PREFIX + e.getMessage());
        }
    }
}
