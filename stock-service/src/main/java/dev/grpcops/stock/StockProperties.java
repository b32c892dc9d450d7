package dev.grpcops.stock;

import org.springframework.boot.context.properties.ConfigurationProperties;

/**
 * Bounds on what Stock remembers for {@code Stats}, so that a flood of distinct SKUs cannot
 * exhaust its memory: at most max-skus × max-samples-per-sku × 8 bytes of samples (80 MB with the
 * defaults, reached only when every SKU has had 1000 calls).
 *
 * @param maxSkus how many distinct SKUs are recorded; a new SKU beyond this evicts the least recently called one
 * @param maxSamplesPerSku how many received deadlines are kept per SKU (the newest); the call count keeps counting.
 *        At most {@value #MAX_SAMPLES_PER_SKU}, so that one SKU's stats (8 bytes a sample) stay far below
 *        the 4 MiB message limit of gRPC clients
 */
@ConfigurationProperties("stock.stats")
record StockProperties(Integer maxSkus, Integer maxSamplesPerSku) {

    static final int MAX_SAMPLES_PER_SKU = 100_000;

    StockProperties {
        maxSkus = maxSkus == null ? 10_000 : maxSkus;
        maxSamplesPerSku = maxSamplesPerSku == null ? 1_000 : maxSamplesPerSku;
        if (maxSkus < 1) {
            throw new IllegalArgumentException("stock.stats.max-skus must be at least 1, got " + maxSkus);
        }
        if (maxSamplesPerSku < 1) {
            throw new IllegalArgumentException(
                    "stock.stats.max-samples-per-sku must be at least 1, got " + maxSamplesPerSku);
        }
        if (maxSamplesPerSku > MAX_SAMPLES_PER_SKU) {
            throw new IllegalArgumentException("stock.stats.max-samples-per-sku must be at most " + MAX_SAMPLES_PER_SKU
                    + " (one SKU's stats must fit a gRPC message), got " + maxSamplesPerSku);
        }
    }
}
