package dev.grpcops.autoconfigure.admin;

import dev.grpcops.admin.AdminAuthorization;
import dev.grpcops.admin.AdminListener;
import dev.grpcops.admin.AdminMethods;
import dev.grpcops.autoconfigure.GrpcopsInterceptorOrder;
import io.grpc.ServerInterceptor;
import io.micrometer.core.instrument.MeterRegistry;
import net.devh.boot.grpc.server.interceptor.GrpcGlobalServerInterceptor;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
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
@EnableConfigurationProperties(AdminProperties.class)
public class AdminAutoConfiguration {

    @Configuration(proxyBeanMethods = false)
    @ConditionalOnBean(MeterRegistry.class)
    static class Metrics {

        @Bean
        @ConditionalOnMissingBean
        AdminListener micrometerAdminListener(MeterRegistry registry) {
            return new MicrometerAdminListener(registry);
        }
    }

    @Bean
    @ConditionalOnMissingBean
    AdminListener adminListener() {
        return AdminListener.NONE;
    }

    @Bean
    @ConditionalOnMissingBean(name = "grpcopsAdminAuthorizationInterceptor")
    @GrpcGlobalServerInterceptor
    @Order(GrpcopsInterceptorOrder.ADMIN_AUTHORIZATION)
    ServerInterceptor grpcopsAdminAuthorizationInterceptor(
            ObjectProvider<AdminMethods> adminMethods, AdminProperties properties, AdminListener listener) {
        // Checked here first, so that the failure names the property (never the value).
        String token = properties.usableToken();
        return AdminAuthorization.builder(adminMethods.orderedStream().toList())
                .token(token)
                .tokenSource(AdminProperties.TOKEN_SOURCE)
                .listener(listener)
                .rateLimit(properties.toRateLimit())
                .build();
    }
}
