package dev.grpcops.autoconfigure.retry;

import java.time.Duration;
import org.springframework.boot.context.properties.ConfigurationProperties;

/** How downstream calls are retried, under {@code grpcops.retry}. */
@ConfigurationProperties("grpcops.retry")
public class RetryProperties {

    /** What an extra attempt needs from its target, per downstream target, on top of the deadline budget's retry-min. */
    private final Limiter limiter = new Limiter();

    public Limiter getLimiter() {
        return limiter;
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
