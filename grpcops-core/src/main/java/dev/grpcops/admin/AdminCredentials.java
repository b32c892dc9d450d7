package dev.grpcops.admin;

import io.grpc.ClientInterceptor;
import io.grpc.Metadata;
import io.grpc.stub.MetadataUtils;

/**
 * What a caller of an admin method sends: metadata {@code authorization: Bearer <token>}.
 *
 * <pre>{@code
 * WhoAmIGrpc.newBlockingStub(channel).withInterceptors(AdminCredentials.bearer(token)).drain(...);
 * }</pre>
 */
public final class AdminCredentials {

    public static final Metadata.Key<String> AUTHORIZATION =
            Metadata.Key.of("authorization", Metadata.ASCII_STRING_MARSHALLER);
    public static final String BEARER = "Bearer ";

    private AdminCredentials() {
    }

    /** Attaches {@code authorization: Bearer <token>} to every call. */
    public static ClientInterceptor bearer(String token) {
        Metadata headers = new Metadata();
        headers.put(AUTHORIZATION, BEARER + token);
        return MetadataUtils.newAttachHeadersInterceptor(headers);
    }
}
