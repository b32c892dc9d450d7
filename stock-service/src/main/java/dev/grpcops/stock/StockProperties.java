package dev.grpcops.stock;

import org.springframework.boot.context.properties.ConfigurationProperties;

/**
 * Bounds on what Stock remembers for {@code Stats}, so that a flood of distinct SKUs cannot
 * exhaust its memory.
 *
 * @param maxSkus how many distinct SKUs are recorded; calls for further SKUs are answered but not recorded
 * @param maxSamplesPerSku how many received deadlines are kept per SKU (the newest); the call count keeps counting
 */
@ConfigurationProperties("stock.stats")
record StockProperties(Integer maxSkus, Integer maxSamplesPerSku) {

    StockProperties {
        maxSkus = maxSkus == null ? 10_000 : maxSkus;
        maxSamplesPerSku = maxSamplesPerSku == null ? 1_000 : maxSamplesPerSku;
        if (maxSkus < 1) {
            throw new IllegalArgumentException("stock.stats.max-skus must be at least 1, got " + maxSkus);
        }
        if (maxSamplesPerSku < 1) {
            throw new IllegalArgumentException("stock.stats.max-samples-per-sku must be at least 1, got " + maxSamplesPerSku);
        }
    }
}
