package dev.grpcops.autoconfigure.retry;

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

        assertThat(limiter.getMaxTokens()).isEqualTo(TokenBucket.DEFAULT_MAX_TOKENS);
        assertThat(limiter.getTokenRatio()).isEqualTo(TokenBucket.DEFAULT_TOKEN_RATIO);
        assertThat(limiter.getBudgetPercent()).isEqualTo(RetryBudget.DEFAULT_PERCENT);
        assertThat(limiter.getBudgetWindow()).isEqualTo(RetryBudget.DEFAULT_WINDOW);
        assertThat(limiter.getMinRetriesPerSecond()).isEqualTo(RetryBudget.DEFAULT_MIN_PER_SECOND);
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
