package dev.grpcops.edge;

import dev.grpcops.chain.ChainInput;
import java.time.Duration;
import org.springframework.boot.context.properties.ConfigurationProperties;

/**
 * Checkout's limits.
 *
 * @param maxSkus the most SKUs (and slow SKUs) one Checkout may ask for
 * @param slowDelay the delay a SKU listed in slow_skus is quoted with
 */
@ConfigurationProperties("edge")
record EdgeProperties(Integer maxSkus, Duration slowDelay) {

    EdgeProperties {
        maxSkus = maxSkus == null ? 100 : maxSkus;
        slowDelay = slowDelay == null ? Duration.ofMillis(3000) : slowDelay;
        if (maxSkus < 1) {
            throw new IllegalArgumentException("edge.max-skus must be at least 1, got " + maxSkus);
        }
        if (slowDelay.isNegative() || slowDelay.toMillis() > ChainInput.MAX_DELAY_MS) {
            throw new IllegalArgumentException("edge.slow-delay must be 0-" + ChainInput.MAX_DELAY_MS + " ms, got " + slowDelay);
        }
    }
}
