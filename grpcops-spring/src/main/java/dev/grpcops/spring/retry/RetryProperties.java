package dev.grpcops.spring.retry;

import java.time.Duration;
import org.springframework.boot.context.properties.ConfigurationProperties;

/** How downstream calls are retried, under {@code grpcops.retry}. */
@ConfigurationProperties("grpcops.retry")
public class RetryProperties {

    /** What an extra attempt needs from its target, per downstream target, on top of the deadline budget's retry-min. */
    private final Limiter limiter = new Limiter();

    /** When an idempotent call (Quote, Check) gets a second attempt on another replica. */
    private final Hedging hedging = new Hedging();

    public Limiter getLimiter() {
        return limiter;
    }

    public Hedging getHedging() {
        return hedging;
    }

    /** {@code grpcops.retry.hedging.*}: after a learned delay, a second attempt to another replica, the first answer wins. */
    public static class Hedging {

        /** Whether hedged calls are hedged at all; when false they are only retried (as any call). */
        private boolean enabled = true;

        /** The hedge delay follows this percentile of the target's recent answer latencies (50-99.9). */
        private double percentile = 99.5;

        /** The shortest hedge delay, whatever the latencies say. */
        private Duration minDelay = Duration.ofMillis(2);

        /** The longest hedge delay, whatever the latencies say. */
        private Duration maxDelay = Duration.ofSeconds(1);

        /** Answers from a target needed before its calls are hedged (1-512). */
        private int minSamples = 200;

        /** Hedges per target at most this percentage of its calls of the last 10 s, plus 1 per second (Finagle's maxExtraLoad). */
        private double maxExtraPercent = 10.0;

        public dev.grpcops.retry.Hedging toHedging() {
            return dev.grpcops.retry.Hedging.builder()
                    .percentile(percentile)
                    .delay(minDelay, maxDelay)
                    .minSamples(minSamples)
                    .maxExtraPercent(maxExtraPercent)
                    .build();
        }

        public boolean isEnabled() {
            return enabled;
        }

        public void setEnabled(boolean enabled) {
            this.enabled = enabled;
        }

        public double getPercentile() {
            return percentile;
        }

        public void setPercentile(double percentile) {
            this.percentile = percentile;
        }

        public Duration getMinDelay() {
            return minDelay;
        }

        public void setMinDelay(Duration minDelay) {
            this.minDelay = minDelay;
        }

        public Duration getMaxDelay() {
            return maxDelay;
        }

        public void setMaxDelay(Duration maxDelay) {
            this.maxDelay = maxDelay;
        }

        public int getMinSamples() {
            return minSamples;
        }

        public void setMinSamples(int minSamples) {
            this.minSamples = minSamples;
        }

        public double getMaxExtraPercent() {
            return maxExtraPercent;
        }

        public void setMaxExtraPercent(double maxExtraPercent) {
            this.maxExtraPercent = maxExtraPercent;
        }
    }

    /** {@code grpcops.retry.limiter.*}: a gRFC A6 token bucket and a ratio retry budget, both of which must allow. */
    public static class Limiter {

        /** Whether the token bucket and the retry budget limit extra attempts; when false only the deadline budget and pushback do. */
        private boolean enabled = true;

        /** gRFC A6 maxTokens: an UNAVAILABLE (or pushed-back) attempt costs 1 token; extra attempts stop while tokens are at or below half. */
        private int maxTokens = 10;

        /** gRFC A6 tokenRatio: what each successful attempt puts back in the bucket. */
        private double tokenRatio = 0.1;

        /** Extra attempts may be at most this percentage of the calls of the last budget-window (plus the floor). */
        private double budgetPercent = 10;

        /** The window the retry budget counts calls and extra attempts over. */
        private Duration budgetWindow = Duration.ofSeconds(10);

        /** The retry budget's floor: extra attempts per second of the window allowed on top of the percentage. */
        private double minRetriesPerSecond = 1;

        public boolean isEnabled() {
            return enabled;
        }

        public void setEnabled(boolean enabled) {
            this.enabled = enabled;
        }

        public int getMaxTokens() {
            return maxTokens;
        }

        public void setMaxTokens(int maxTokens) {
            this.maxTokens = maxTokens;
        }

        public double getTokenRatio() {
            return tokenRatio;
        }

        public void setTokenRatio(double tokenRatio) {
            this.tokenRatio = tokenRatio;
        }

        public double getBudgetPercent() {
            return budgetPercent;
        }

        public void setBudgetPercent(double budgetPercent) {
            this.budgetPercent = budgetPercent;
        }

        public Duration getBudgetWindow() {
            return budgetWindow;
        }

        public void setBudgetWindow(Duration budgetWindow) {
            this.budgetWindow = budgetWindow;
        }

        public double getMinRetriesPerSecond() {
            return minRetriesPerSecond;
        }

        public void setMinRetriesPerSecond(double minRetriesPerSecond) {
            this.minRetriesPerSecond = minRetriesPerSecond;
        }
    }
}
