package dev.grpcops.autoconfigure.admin;

import dev.grpcops.admin.AdminListener;
import dev.grpcops.admin.AdminMethods;
import dev.grpcops.autoconfigure.GrpcopsInterceptorOrder;
import dev.grpcops.spring.admin.AdminConfiguration;
import dev.grpcops.spring.admin.AdminProperties;
import dev.grpcops.spring.admin.UnusableAdminTokenFailureAnalyzer;
import io.grpc.ServerInterceptor;
import net.devh.boot.grpc.server.interceptor.GrpcGlobalServerInterceptor;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Import;
import org.springframework.core.annotation.Order;

/**
 * Admin authorization for every {@link AdminMethods} bean's methods: a bearer token from
 * {@code grpcops.admin.token}, refused calls rate-limited per caller address and logged in
 * aggregate ({@code grpcops.admin.rate-limit.*}, {@code grpcops.admin.refusal-log-interval}).
 * Services without admin methods are not affected. A token that is a known placeholder or too
 * short stops the service at start, saying how to set one
 * ({@link UnusableAdminTokenFailureAnalyzer}).
 */
@AutoConfiguration(
        afterName = "org.springframework.boot.actuate.autoconfigure.metrics.CompositeMeterRegistryAutoConfiguration")
@ConditionalOnClass(GrpcGlobalServerInterceptor.class)
@Import(AdminConfiguration.class)
public class AdminAutoConfiguration {

    @Bean
    @ConditionalOnMissingBean(name = "grpcopsAdminAuthorizationInterceptor")
    @GrpcGlobalServerInterceptor
    @Order(GrpcopsInterceptorOrder.ADMIN_AUTHORIZATION)
    ServerInterceptor grpcopsAdminAuthorizationInterceptor(
            ObjectProvider<AdminMethods> adminMethods, AdminProperties properties, AdminListener listener) {
        return AdminConfiguration.authorization(adminMethods, properties, listener);
    }
}
