package dev.grpcops.stock;

import java.nio.charset.StandardCharsets;

/**
 * The quantity of a SKU: the sum of its UTF-8 bytes modulo 100. Deterministic and easy to
 * compute in any language, so that a client can check the answer it got.
 */
final class Inventory {

    private Inventory() {}

    static int quantity(String sku) {
        int sum = 0;
        for (byte b : sku.getBytes(StandardCharsets.UTF_8)) {
            sum += b & 0xff;
        }
        return sum % 100;
    }
}
