package dev.grpcops.stock;

import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import java.nio.ByteBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.util.Base64;

/**
 * Paging of {@code Stats} over every SKU, as in Google's API design guide (AIP-158): the request's
 * {@code page_size} and {@code page_token}, the reply's {@code next_page_token}.
 *
 * <p>Sizes: {@value #DEFAULT_PAGE_SIZE} SKUs when the caller leaves {@code page_size} 0, at most
 * {@value #MAX_PAGE_SIZE}. A SKU's stats are at most about 8.5 KB with the default 1000 samples per
 * SKU, so the default page is at most about 0.9 MB; a page also ends before it would pass
 * {@link CallLog#MAX_PAGE_BYTES} (2 MiB), which cuts a page of 1000 at about 245 such SKUs. Every
 * reply thus fits the 4 MiB default message limit of gRPC clients.
 *
 * <p>The token is opaque to callers: base64url of a version prefix and the last SKU returned. Paging
 * by name rather than by position keeps a token valid while SKUs are recorded and evicted.
 */
final class StatsPaging {

    static final int DEFAULT_PAGE_SIZE = 100;
    static final int MAX_PAGE_SIZE = 1000;

    private static final String PREFIX = "s1:";
    /** Prefix and a SKU of at most 128 code points of at most 4 UTF-8 bytes each, in base64. */
    private static final int MAX_TOKEN_LENGTH = 4 * (PREFIX.length() + 4 * 128) / 3 + 4;

    private StatsPaging() {}

    /** The page size to use for the request's {@code page_size}. */
    static int pageSize(int requested) {
        if (requested < 0) {
            throw invalid("page_size: must be 0 (the default, " + DEFAULT_PAGE_SIZE + ") or more, got " + requested);
        }
        return requested == 0 ? DEFAULT_PAGE_SIZE : Math.min(requested, MAX_PAGE_SIZE);
    }

    /** The token that continues after {@code lastSku}. */
    static String token(String lastSku) {
        return Base64.getUrlEncoder()
                .withoutPadding()
                .encodeToString((PREFIX + lastSku).getBytes(StandardCharsets.UTF_8));
    }

    /** The SKU a {@code page_token} continues after; null for the first page (empty token). */
    static String after(String token) {
        if (token.isEmpty()) {
            return null;
        }
        if (token.length() > MAX_TOKEN_LENGTH) {
            throw malformed();
        }
        String decoded;
        try {
            byte[] bytes = Base64.getUrlDecoder().decode(token);
            decoded = StandardCharsets.UTF_8
                    .newDecoder()
                    .onMalformedInput(CodingErrorAction.REPORT)
                    .onUnmappableCharacter(CodingErrorAction.REPORT)
                    .decode(ByteBuffer.wrap(bytes))
                    .toString();
        } catch (IllegalArgumentException | CharacterCodingException e) {
            throw malformed();
        }
        if (!decoded.startsWith(PREFIX) || decoded.length() == PREFIX.length()) {
            throw malformed();
        }
        return decoded.substring(PREFIX.length());
    }

    private static StatusRuntimeException malformed() {
        return invalid("page_token: not a token Stats gave; pass next_page_token of the previous reply unchanged,"
                + " or empty for the first page");
    }

    private static StatusRuntimeException invalid(String message) {
        return Status.INVALID_ARGUMENT.withDescription(message).asRuntimeException();
    }
}
