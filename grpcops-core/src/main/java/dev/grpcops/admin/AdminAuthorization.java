package dev.grpcops.admin;

import dev.grpcops.admin.internal.AdminAuthorizationInterceptor;
import dev.grpcops.admin.internal.RefusedAdminCalls;
import io.grpc.Metadata;
import io.grpc.ServerCall;
import io.grpc.ServerCallHandler;
import io.grpc.ServerInterceptor;
import java.util.Collection;
import java.util.HashSet;
import java.util.List;
import java.util.Objects;
import java.util.Set;

/**
 * A server interceptor that lets admin methods through only with {@code authorization: Bearer
 * <token>} matching the configured token (compared in constant time): missing credentials end the
 * call {@code UNAUTHENTICATED}, a wrong token {@code PERMISSION_DENIED}, and the method never runs.
 * Other methods pass untouched.
 *
 * <pre>{@code
 * AdminAuthorization admin = AdminAuthorization.builder(List.of(AdminMethods.of(WhoAmIGrpc.getDrainMethod())))
 *         .token(System.getenv("GRPCOPS_ADMIN_TOKEN")).listener(metrics).build();
 * }</pre>
 */
public final class AdminAuthorization implements ServerInterceptor {

    private final Set<String> fullMethodNames;
    private final ServerInterceptor interceptor;

    private AdminAuthorization(Builder builder) {
        Set<String> names = new HashSet<>();
        builder.adminMethods.forEach(methods -> names.addAll(methods.fullMethodNames()));
        this.fullMethodNames = Set.copyOf(names);
        this.interceptor = new AdminAuthorizationInterceptor(
                builder.adminMethods,
                builder.token,
                builder.listener,
                new RefusedAdminCalls(builder.rateLimit),
                builder.tokenSource);
    }

    /** For the union of {@code adminMethods}. */
    public static Builder builder(Collection<AdminMethods> adminMethods) {
        return new Builder(adminMethods);
    }

    /** The token, and what refused calls cost. */
    public static final class Builder {

        private final List<AdminMethods> adminMethods;
        private String token;
        private AdminListener listener = AdminListener.NONE;
        private AdminRateLimit rateLimit = AdminRateLimit.DEFAULTS;
        private String tokenSource = "the admin token";

        private Builder(Collection<AdminMethods> adminMethods) {
            this.adminMethods = List.copyOf(adminMethods);
        }

        /**
         * The admin token (surrounding whitespace ignored); null or blank (the default) refuses every
         * admin call. A known placeholder or fewer than {@value AdminTokens#MIN_LENGTH} characters is
         * refused by {@link #build()} with {@link AdminTokens.UnusableAdminTokenException}.
         */
        public Builder token(String token) {
            this.token = token;
            return this;
        }

        /**
         * Where operators set the token ({@code "the admin token"} by default), named in the refusal
         * an admin call gets while there is none: a framework names its own setting here.
         */
        public Builder tokenSource(String tokenSource) {
            this.tokenSource = Objects.requireNonNull(tokenSource, "tokenSource");
            return this;
        }

        /** Told how every admin call ended (metrics); nothing by default. */
        public Builder listener(AdminListener listener) {
            this.listener = Objects.requireNonNull(listener, "listener");
            return this;
        }

        /** How refused calls are limited and logged per address; {@link AdminRateLimit#DEFAULTS} by default. */
        public Builder rateLimit(AdminRateLimit rateLimit) {
            this.rateLimit = Objects.requireNonNull(rateLimit, "rateLimit");
            return this;
        }

        /** @throws AdminTokens.UnusableAdminTokenException if the token is a placeholder or too short */
        public AdminAuthorization build() {
            return new AdminAuthorization(this);
        }
    }

    /**
     * The full names of the admin methods this guards: for the features that must leave them alone
     * (admission never queues nor sheds them).
     */
    public Set<String> fullMethodNames() {
        return fullMethodNames;
    }

    @Override
    public <ReqT, RespT> ServerCall.Listener<ReqT> interceptCall(
            ServerCall<ReqT, RespT> call, Metadata headers, ServerCallHandler<ReqT, RespT> next) {
        return interceptor.interceptCall(call, headers, next);
    }
}
