package dev.grpcops.autoconfigure.admin;

import dev.grpcops.admin.AdminListener;
import dev.grpcops.admin.AdminMethods;
import dev.grpcops.admin.internal.AdminAuthorizationInterceptor;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.composite.CompositeMeterRegistry;
import net.devh.boot.grpc.server.interceptor.GrpcGlobalServerInterceptor;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.context.annotation.Bean;

/**
 * Admin authorization for every {@link AdminMethods} bean's methods: a bearer token from
 * {@code grpcops.admin.token}. Services without admin methods are not affected.
 */
@AutoConfiguration(afterName = "org.springframework.boot.actuate.autoconfigure.metrics.CompositeMeterRegistryAutoConfiguration")
@ConditionalOnClass(GrpcGlobalServerInterceptor.class)
@EnableConfigurationProperties(AdminProperties.class)
public class AdminAutoConfiguration {

    @Bean
    @ConditionalOnMissingBean
    AdminListener adminListener(ObjectProvider<MeterRegistry> registry) {
        return new MicrometerAdminListener(registry.getIfAvailable(CompositeMeterRegistry::new));
    }

    @Bean
    @ConditionalOnMissingBean
    @GrpcGlobalServerInterceptor
    AdminAuthorizationInterceptor adminAuthorizationInterceptor(ObjectProvider<AdminMethods> adminMethods,
            AdminProperties properties, AdminListener listener) {
        return new AdminAuthorizationInterceptor(adminMethods.orderedStream().toList(), properties.getToken(), listener);
    }
}
