package dev.grpcops.admin.internal;

import dev.grpcops.admin.AdminCredentials;
import dev.grpcops.admin.AdminListener;
import dev.grpcops.admin.AdminMethods;
import io.grpc.ForwardingServerCall;
import io.grpc.Grpc;
import io.grpc.Metadata;
import io.grpc.ServerCall;
import io.grpc.ServerCallHandler;
import io.grpc.ServerInterceptor;
import io.grpc.Status;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.Collection;
import java.util.Set;
import java.util.stream.Collectors;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Lets an admin method through only with metadata {@code authorization: Bearer <token>}
 * matching the configured token, compared in constant time. Missing credentials end the call
 * with {@code UNAUTHENTICATED}, a wrong token (or none configured) with {@code PERMISSION_DENIED};
 * the service method never runs. Every admin call is logged with the caller's address and result,
 * and told to the {@link AdminListener} (metrics).
 */
public final class AdminAuthorizationInterceptor implements ServerInterceptor {

    private static final Logger log = LoggerFactory.getLogger(AdminAuthorizationInterceptor.class);

    private final Set<String> adminMethods;
    private final byte[] tokenDigest;
    private final AdminListener listener;

    /** @param token the admin token; null or blank refuses every admin call */
    public AdminAuthorizationInterceptor(Collection<AdminMethods> adminMethods, String token, AdminListener listener) {
        this.adminMethods = adminMethods.stream().flatMap(m -> m.fullMethodNames().stream()).collect(Collectors.toSet());
        this.tokenDigest = token == null || token.isBlank() ? null : sha256(token);
        this.listener = listener;
    }

    @Override
    public <ReqT, RespT> ServerCall.Listener<ReqT> interceptCall(
            ServerCall<ReqT, RespT> call, Metadata headers, ServerCallHandler<ReqT, RespT> next) {
        String method = call.getMethodDescriptor().getFullMethodName();
        if (!adminMethods.contains(method)) {
            return next.startCall(call, headers);
        }
        Status refusal = refusal(headers.get(AdminCredentials.AUTHORIZATION));
        ServerCall<ReqT, RespT> logged = new ForwardingServerCall.SimpleForwardingServerCall<>(call) {
            @Override
            public void close(Status status, Metadata trailers) {
                record(method, call, status);
                super.close(status, trailers);
            }
        };
        if (refusal != null) {
            logged.close(refusal, new Metadata());
            return new ServerCall.Listener<>() { };
        }
        return next.startCall(logged, headers);
    }

    private Status refusal(String authorization) {
        if (tokenDigest == null) {
            return Status.PERMISSION_DENIED.withDescription(
                    "admin operations are disabled: set grpcops.admin.token (env GRPCOPS_ADMIN_TOKEN)");
        }
        if (authorization == null || !authorization.startsWith(AdminCredentials.BEARER)) {
            return Status.UNAUTHENTICATED.withDescription("admin operation needs metadata 'authorization: Bearer <token>'");
        }
        // Digests have one length whatever was sent, so the comparison takes the same time.
        if (!MessageDigest.isEqual(tokenDigest, sha256(authorization.substring(AdminCredentials.BEARER.length())))) {
            return Status.PERMISSION_DENIED.withDescription("admin token rejected");
        }
        return null;
    }

    private void record(String method, ServerCall<?, ?> call, Status status) {
        Object caller = call.getAttributes().get(Grpc.TRANSPORT_ATTR_REMOTE_ADDR);
        if (status.isOk()) {
            log.info("admin {} from {}: OK", method, caller);
        } else {
            log.warn("admin {} from {}: {} {}", method, caller, status.getCode(), status.getDescription());
        }
        listener.completed(method, status.getCode());
    }

    private static byte[] sha256(String value) {
        try {
            return MessageDigest.getInstance("SHA-256").digest(value.getBytes(StandardCharsets.UTF_8));
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("every JVM has SHA-256", e);
        }
    }
}
