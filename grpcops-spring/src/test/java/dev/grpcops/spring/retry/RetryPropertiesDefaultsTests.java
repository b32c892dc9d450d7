package dev.grpcops.spring.retry;

import static org.assertj.core.api.Assertions.assertThat;

import dev.grpcops.retry.RetryBudget;
import dev.grpcops.retry.TokenBucket;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The limiter's properties default to the core's: {@code grpcops.retry.limiter.*} left unset gives
 * the token bucket and retry budget a plain grpc-java client gets from the builders. (The properties
 * keep literal values so that the generated metadata, and the docs' defaults, show them.)
 */
@Timeout(30)
class RetryPropertiesDefaultsTests {

    @Test
    void unsetLimiterPropertiesGiveTheCoresDefaults() {
        RetryProperties.Limiter limiter = new RetryProperties().getLimiter();
        TokenBucket bucket = TokenBucket.builder().build();
        RetryBudget budget = RetryBudget.builder().build();

        assertThat(limiter.getMaxTokens()).isEqualTo(bucket.maxTokens());
        assertThat(limiter.getTokenRatio()).isEqualTo(bucket.tokenRatio());
        assertThat(limiter.getBudgetPercent()).isEqualTo(budget.percent());
        assertThat(limiter.getBudgetWindow()).isEqualTo(budget.window());
        assertThat(limiter.getMinRetriesPerSecond()).isEqualTo(budget.minPerSecond());
    }

    @Test
    void unsetHedgingPropertiesGiveTheCoresHedging() {
        RetryProperties.Hedging hedging = new RetryProperties().getHedging();
        dev.grpcops.retry.Hedging core = dev.grpcops.retry.Hedging.DEFAULTS;

        assertThat(hedging.getPercentile()).isEqualTo(core.percentile());
        assertThat(hedging.getMinDelay()).isEqualTo(core.minDelay());
        assertThat(hedging.getMaxDelay()).isEqualTo(core.maxDelay());
        assertThat(hedging.getMinSamples()).isEqualTo(core.minSamples());
        assertThat(hedging.getMaxExtraPercent()).isEqualTo(core.maxExtraPercent());
    }
}
