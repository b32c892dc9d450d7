package dev.grpcops.chain;

import dev.grpcops.proto.chain.v1.CheckRequest;
import dev.grpcops.proto.chain.v1.CheckoutRequest;
import dev.grpcops.proto.chain.v1.QuoteRequest;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import java.util.List;

/**
 * The input rules of the chain contract, shared by Stock, Pricing and Edge so that every hop
 * refuses the same bad input with the same message.
 *
 * <p>Every check throws {@link StatusRuntimeException} with {@code INVALID_ARGUMENT} and a
 * message that names the offending field; a handler passes it to {@code onError} as it is.
 */
public final class ChainInput {

    /** Longest SKU, in characters (Unicode code points). */
    public static final int MAX_SKU_LENGTH = 128;

    /** Longest wait a caller may ask of Stock. */
    public static final int MAX_DELAY_MS = 60_000;

    private ChainInput() {}

    public static void check(CheckRequest request) {
        sku("sku", request.getSku());
        delay(request.getDelayMs());
    }

    public static void check(QuoteRequest request) {
        sku("sku", request.getSku());
        delay(request.getDelayMs());
    }

    public static void check(CheckoutRequest request, int maxSkus) {
        List<String> skus = request.getSkusList();
        if (skus.isEmpty()) {
            throw invalid("skus: at least one SKU is required");
        }
        if (skus.size() > maxSkus) {
            throw invalid("skus: " + skus.size() + " SKUs, at most " + maxSkus + " allowed");
        }
        if (request.getSlowSkusCount() > maxSkus) {
            throw invalid("slow_skus: " + request.getSlowSkusCount() + " SKUs, at most " + maxSkus + " allowed");
        }
        for (int i = 0; i < skus.size(); i++) {
            sku("skus[" + i + "]", skus.get(i));
        }
        for (int i = 0; i < request.getSlowSkusCount(); i++) {
            sku("slow_skus[" + i + "]", request.getSlowSkus(i));
        }
        delay(request.getDelayMs());
    }

    /** A SKU is 1 to 128 characters, none of them a control character. */
    public static void sku(String field, String sku) {
        int length = sku.codePointCount(0, sku.length());
        if (length < 1 || length > MAX_SKU_LENGTH) {
            throw invalid(field + ": must be 1-" + MAX_SKU_LENGTH + " characters, got " + length);
        }
        if (sku.codePoints().anyMatch(Character::isISOControl)) {
            throw invalid(field + ": must not contain control characters");
        }
    }

    private static void delay(int delayMs) {
        if (delayMs < 0 || delayMs > MAX_DELAY_MS) {
            throw invalid("delay_ms: must be 0-" + MAX_DELAY_MS + ", got " + delayMs);
        }
    }

    private static StatusRuntimeException invalid(String message) {
        return Status.INVALID_ARGUMENT.withDescription(message).asRuntimeException();
    }
}
