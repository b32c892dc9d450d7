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
        // The field's name is made only for the message: these run for every call.
        for (int i = 0; i < skus.size(); i++) {
            String problem = skuProblem(skus.get(i));
            if (problem != null) {
                throw invalid("skus[" + i + "]: " + problem);
            }
        }
        for (int i = 0; i < request.getSlowSkusCount(); i++) {
            String problem = skuProblem(request.getSlowSkus(i));
            if (problem != null) {
                throw invalid("slow_skus[" + i + "]: " + problem);
            }
        }
        delay(request.getDelayMs());
    }

    /** A SKU is 1 to 128 characters, none of them a control character. */
    public static void sku(String field, String sku) {
        String problem = skuProblem(sku);
        if (problem != null) {
            throw invalid(field + ": " + problem);
        }
    }

    /** What is wrong with {@code sku}, or null: one pass over its characters, no stream. */
    private static String skuProblem(String sku) {
        int length = sku.length();
        if (length == 0 || length > 2 * MAX_SKU_LENGTH) {
            return lengthProblem(sku);
        }
        boolean control = false;
        boolean surrogates = false;
        for (int i = 0; i < length; i++) {
            char c = sku.charAt(i);
            // Control characters are all in the Basic Multilingual Plane: a char is enough.
            control |= Character.isISOControl(c);
            surrogates |= Character.isSurrogate(c);
        }
        if (length > MAX_SKU_LENGTH && (!surrogates || sku.codePointCount(0, length) > MAX_SKU_LENGTH)) {
            return lengthProblem(sku);
        }
        return control ? "must not contain control characters" : null;
    }

    private static String lengthProblem(String sku) {
        return "must be 1-" + MAX_SKU_LENGTH + " characters, got " + sku.codePointCount(0, sku.length());
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
