package dev.grpcops.pricing;

import org.springframework.boot.context.properties.ConfigurationProperties;

/**
 * What Pricing answers besides Stock's quantity.
 *
 * @param priceCents the price of every SKU, in cents
 */
@ConfigurationProperties("pricing")
record PricingProperties(Long priceCents) {

    PricingProperties {
        priceCents = priceCents == null ? 1200 : priceCents;
        if (priceCents < 0) {
            throw new IllegalArgumentException("pricing.price-cents must not be negative, got " + priceCents);
        }
    }
}
