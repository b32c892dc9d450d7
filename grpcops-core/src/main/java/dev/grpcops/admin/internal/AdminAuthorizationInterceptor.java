package dev.grpcops.admin.internal;

import dev.grpcops.admin.AdminCredentials;
import dev.grpcops.admin.AdminListener;
import dev.grpcops.admin.AdminMethods;
import dev.grpcops.admin.AdminRateLimit;
import dev.grpcops.admin.AdminTokens;
import dev.grpcops.internal.PeerAddresses;
import dev.grpcops.internal.SecretToken;
import io.grpc.ForwardingServerCall;
import io.grpc.Grpc;
import io.grpc.Metadata;
import io.grpc.ServerCall;
import io.grpc.ServerCallHandler;
import io.grpc.ServerInterceptor;
import io.grpc.Status;
import java.time.Duration;
import java.util.Collection;
import java.util.Set;
import java.util.stream.Collectors;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Lets an admin method through only with metadata {@code authorization: Bearer <token>}
 * matching the configured token, compared in constant time; the scheme is read in any case and
 * whitespace around it is ignored (RFC 7235). Missing credentials end the call with
 * {@code UNAUTHENTICATED}, a wrong token (or none configured) with {@code PERMISSION_DENIED}; the
 * service method never runs. Once an address's admin calls were refused too often (or those of
 * every address but the loopback), its admin calls end with {@code RESOURCE_EXHAUSTED} for a while,
 * their token not looked at ({@link AdminRateLimit}, kept by {@link RefusedAdminCalls}). At most
 * {@link AdminRateLimit#maxConcurrent()} admin calls let through run at once; beyond, one ends
 * {@code RESOURCE_EXHAUSTED} at once.
 *
 * <p>Calls let through are logged one by one with the caller's address and result (INFO when OK);
 * refused calls are logged in aggregate, at most one WARN line per address per interval with
 * their count. Every admin call is told to the {@link AdminListener} (metrics).
 */
public final class AdminAuthorizationInterceptor implements ServerInterceptor {

    private static final Logger log = LoggerFactory.getLogger(AdminAuthorizationInterceptor.class);

    private final Set<String> adminMethods;
    /** The admin token; null: admin operations are disabled. */
    private final SecretToken adminToken;

    private final AdminListener listener;
    private final RefusedAdminCalls refusals;
    /** Admin calls let through and not ended yet. */
    private final java.util.concurrent.Semaphore running;
    /** Where the token is set, named in the refusal when there is none. */
    private final String tokenSource;

    /**
     * With the default {@link AdminRateLimit}.
     *
     * @param token the admin token; null or blank refuses every admin call
     * @throws AdminTokens.UnusableAdminTokenException if the token is a placeholder or too short
     */
    public AdminAuthorizationInterceptor(Collection<AdminMethods> adminMethods, String token, AdminListener listener) {
        this(adminMethods, token, listener, new RefusedAdminCalls(AdminRateLimit.DEFAULTS), "the admin token");
    }

    /**
     * @param token the admin token (surrounding whitespace ignored); null or blank refuses every admin call
     * @param refusals the refused calls per address: the rate limit and the aggregated log
     * @param tokenSource where the token is set, as the refusal names it when there is none
     * @throws AdminTokens.UnusableAdminTokenException if the token is a placeholder or too short
     */
    public AdminAuthorizationInterceptor(
            Collection<AdminMethods> adminMethods,
            String token,
            AdminListener listener,
            RefusedAdminCalls refusals,
            String tokenSource) {
        this.adminMethods =
                adminMethods.stream().flatMap(m -> m.fullMethodNames().stream()).collect(Collectors.toSet());
        String usable = AdminTokens.requireUsable(token, "the admin token");
        this.adminToken = SecretToken.of(usable);
        this.listener = listener;
        this.refusals = refusals;
        this.tokenSource = tokenSource;
        this.running = new java.util.concurrent.Semaphore(refusals.limit().maxConcurrent());
    }

    @Override
    public <ReqT, RespT> ServerCall.Listener<ReqT> interceptCall(
            ServerCall<ReqT, RespT> call, Metadata headers, ServerCallHandler<ReqT, RespT> next) {
        String method = call.getMethodDescriptor().getFullMethodName();
        if (!adminMethods.contains(method)) {
            return next.startCall(call, headers);
        }
        String peer = PeerAddresses.ip(call.getAttributes().get(Grpc.TRANSPORT_ATTR_REMOTE_ADDR));
        // An address refused too often learns nothing more: its token is not even compared.
        Duration blocked = refusals.blocked(peer);
        if (!blocked.isZero()) {
            return end(call, method, refusals.refuseUnchecked(peer, method, blocked));
        }
        Status refusal = refusal(headers.get(AdminCredentials.AUTHORIZATION));
        if (refusal != null) {
            return end(call, method, refusals.refuse(peer, method, refusal));
        }
        refusals.succeeded(peer);
        if (!running.tryAcquire()) {
            return end(
                    call,
                    method,
                    Status.RESOURCE_EXHAUSTED.withDescription(
                            "admin: " + refusals.limit().maxConcurrent()
                                    + " admin calls already running; try again when one has ended"));
        }
        java.util.concurrent.atomic.AtomicBoolean ended = new java.util.concurrent.atomic.AtomicBoolean();
        Runnable release = () -> {
            if (ended.compareAndSet(false, true)) {
                running.release();
            }
        };
        ServerCall<ReqT, RespT> logged = new ForwardingServerCall.SimpleForwardingServerCall<>(call) {
            @Override
            public void close(Status status, Metadata trailers) {
                record(method, peer, status);
                super.close(status, trailers);
            }
        };
        ServerCall.Listener<ReqT> handler;
        try {
            handler = next.startCall(logged, headers);
        } catch (RuntimeException | Error e) {
            release.run();
            throw e;
        }
        return new io.grpc.ForwardingServerCallListener.SimpleForwardingServerCallListener<>(handler) {
            @Override
            public void onComplete() {
                try {
                    super.onComplete();
                } finally {
                    release.run();
                }
            }

            @Override
            public void onCancel() {
                try {
                    super.onCancel();
                } finally {
                    release.run();
                }
            }
        };
    }

    private <ReqT> ServerCall.Listener<ReqT> end(ServerCall<ReqT, ?> call, String method, Status answer) {
        listener.completed(method, answer.getCode());
        call.close(answer, new Metadata());
        return new ServerCall.Listener<>() {};
    }

    private Status refusal(String authorization) {
        if (adminToken == null) {
            return Status.PERMISSION_DENIED.withDescription("admin operations are disabled: set " + tokenSource);
        }
        String token = AdminCredentials.bearerToken(authorization);
        if (token == null) {
            return Status.UNAUTHENTICATED.withDescription(
                    "admin operation needs metadata 'authorization: Bearer <token>'");
        }
        if (!adminToken.matches(token)) {
            return Status.PERMISSION_DENIED.withDescription("admin token rejected");
        }
        return null;
    }

    /** A call that was let through ended: INFO when OK, WARN otherwise (an operator's call failed). */
    private void record(String method, String peer, Status status) {
        if (status.isOk()) {
            log.info("admin {} from {}: OK", method, peer);
        } else {
            log.warn("admin {} from {}: {} {}", method, peer, status.getCode(), status.getDescription());
        }
        listener.completed(method, status.getCode());
    }
}
