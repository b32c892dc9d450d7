package dev.grpcops.admin;

import io.grpc.MethodDescriptor;
import java.util.Arrays;
import java.util.Set;
import java.util.stream.Collectors;

/**
 * The methods of a service that change what the cluster does (drain, resume, ...) and so need
 * the admin token. Declare one bean per service; the admin interceptor guards the union.
 *
 * <pre>{@code
 * @Bean
 * AdminMethods whoAmIAdmin() {
 *     return AdminMethods.of(WhoAmIGrpc.getDrainMethod(), WhoAmIGrpc.getResumeMethod());
 * }
 * }</pre>
 */
public final class AdminMethods {

    private final Set<String> fullMethodNames;

    private AdminMethods(Set<String> fullMethodNames) {
        this.fullMethodNames = Set.copyOf(fullMethodNames);
    }

    public static AdminMethods of(MethodDescriptor<?, ?>... methods) {
        return new AdminMethods(
                Arrays.stream(methods).map(MethodDescriptor::getFullMethodName).collect(Collectors.toSet()));
    }

    public Set<String> fullMethodNames() {
        return fullMethodNames;
    }
}
