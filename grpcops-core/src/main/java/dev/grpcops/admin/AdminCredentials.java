package dev.grpcops.admin;

import io.grpc.ClientInterceptor;
import io.grpc.Metadata;
import io.grpc.stub.MetadataUtils;
import org.jspecify.annotations.Nullable;

/**
 * What a caller of an admin method sends: metadata {@code authorization: Bearer <token>}. The
 * server reads the scheme case-insensitively and ignores surrounding whitespace (RFC 7235).
 *
 * <pre>{@code
 * WhoAmIGrpc.newBlockingStub(channel).withInterceptors(AdminCredentials.bearer(token)).drain(...);
 * }</pre>
 */
public final class AdminCredentials {

    public static final Metadata.Key<String> AUTHORIZATION =
            Metadata.Key.of("authorization", Metadata.ASCII_STRING_MARSHALLER);
    public static final String BEARER = "Bearer ";

    private AdminCredentials() {}

    /**
     * The token of an {@code authorization} value with the {@code Bearer} scheme, in any case
     * ({@code bearer}, {@code BEARER}), whitespace around and between tolerated; null if the value
     * is missing, has another scheme or no token.
     */
    public static @Nullable String bearerToken(@Nullable String authorization) {
        if (authorization == null) {
            return null;
        }
        String value = authorization.strip();
        int end = 0;
        while (end < value.length() && !Character.isWhitespace(value.charAt(end))) {
            end++;
        }
        if (!value.substring(0, end).equalsIgnoreCase(BEARER.strip())) {
            return null;
        }
        String token = value.substring(end).strip();
        return token.isEmpty() ? null : token;
    }

    /** Attaches {@code authorization: Bearer <token>} to every call. */
    public static ClientInterceptor bearer(String token) {
        Metadata headers = new Metadata();
        headers.put(AUTHORIZATION, BEARER + token);
        return MetadataUtils.newAttachHeadersInterceptor(headers);
    }
}
