package dev.grpcops.springgrpc.admin;

import dev.grpcops.admin.AdminListener;
import dev.grpcops.admin.AdminMethods;
import dev.grpcops.spring.admin.AdminConfiguration;
import dev.grpcops.spring.admin.AdminProperties;
import dev.grpcops.springgrpc.GrpcopsInterceptorOrder;
import io.grpc.ServerInterceptor;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Import;
import org.springframework.core.annotation.Order;
import org.springframework.grpc.server.GlobalServerInterceptor;

/**
 * Admin authorization for every {@link AdminMethods} bean's methods ({@link AdminConfiguration}):
 * a bearer token from {@code grpcops.admin.token}, checked outside Spring gRPC's observation so
 * that a flood of refused admin calls costs nothing more. Services without admin methods are not
 * affected.
 */
@AutoConfiguration(afterName = "org.springframework.boot.micrometer.metrics.autoconfigure.CompositeMeterRegistryAutoConfiguration")
@ConditionalOnClass(name = "org.springframework.boot.grpc.server.autoconfigure.GrpcServerAutoConfiguration")
@Import(AdminConfiguration.class)
public class AdminAutoConfiguration {

    @Bean
    @ConditionalOnMissingBean(name = "grpcopsAdminAuthorizationInterceptor")
    @GlobalServerInterceptor
    @Order(GrpcopsInterceptorOrder.ADMIN_AUTHORIZATION)
    ServerInterceptor grpcopsAdminAuthorizationInterceptor(
            ObjectProvider<AdminMethods> adminMethods, AdminProperties properties, AdminListener listener) {
        return AdminConfiguration.authorization(adminMethods, properties, listener);
    }
}
