package dev.grpcops.edge;

import dev.grpcops.chain.ChainInput;
import java.time.Duration;
import org.springframework.boot.context.properties.ConfigurationProperties;

/**
 * Checkout's limits.
 *
 * @param maxSkus the most SKUs (and slow SKUs) one Checkout may ask for
 * @param slowDelay the delay a SKU listed in slow_skus is quoted with
 * @param maxQuotesInFlight the most Quotes sent to Pricing and not yet answered, over all Checkouts;
 *     beyond it a line is answered unavailable with RESOURCE_EXHAUSTED
 */
@ConfigurationProperties("edge")
record EdgeProperties(Integer maxSkus, Duration slowDelay, Integer maxQuotesInFlight) {

    EdgeProperties {
        maxSkus = maxSkus == null ? 100 : maxSkus;
        slowDelay = slowDelay == null ? Duration.ofMillis(3000) : slowDelay;
        maxQuotesInFlight = maxQuotesInFlight == null ? 5000 : maxQuotesInFlight;
        if (maxSkus < 1) {
            throw new IllegalArgumentException("edge.max-skus must be at least 1, got " + maxSkus);
        }
        if (maxQuotesInFlight < 1) {
            throw new IllegalArgumentException(
                    "edge.max-quotes-in-flight must be at least 1, got " + maxQuotesInFlight);
        }
        if (slowDelay.isNegative() || slowDelay.toMillis() > ChainInput.MAX_DELAY_MS) {
            throw new IllegalArgumentException(
                    "edge.slow-delay must be 0-" + ChainInput.MAX_DELAY_MS + " ms, got " + slowDelay);
        }
    }
}
