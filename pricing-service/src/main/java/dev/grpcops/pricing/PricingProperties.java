package dev.grpcops.pricing;

import org.springframework.boot.context.properties.ConfigurationProperties;

/**
 * What Pricing answers besides Stock's quantity.
 *
 * @param priceCents the price of every SKU, in cents
 * @param retryStock whether a Stock call that failed with UNAVAILABLE is retried through the
 *     library's {@code Retry} (deadline floor, retry limiter, pushback; never under a Quote
 *     that arrived as a retry of Edge's). Off by default: design §5 has Edge retry, Pricing pass errors on.
 */
@ConfigurationProperties("pricing")
record PricingProperties(Long priceCents, Boolean retryStock) {

    PricingProperties {
        priceCents = priceCents == null ? 1200 : priceCents;
        retryStock = retryStock != null && retryStock;
        if (priceCents < 0) {
            throw new IllegalArgumentException("pricing.price-cents must not be negative, got " + priceCents);
        }
    }
}
