package dev.grpcops.autoconfigure.admin;

import dev.grpcops.admin.AdminListener;
import dev.grpcops.admin.AdminMethods;
import dev.grpcops.admin.internal.AdminAuthorizationInterceptor;
import dev.grpcops.admin.internal.RefusedAdminCalls;
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
 * {@code grpcops.admin.token}, refused calls rate-limited per caller address and logged in
 * aggregate ({@code grpcops.admin.rate-limit.*}, {@code grpcops.admin.refusal-log-interval}).
 * Services without admin methods are not affected. A token that is a known placeholder or too
 * short stops the service at start, saying how to set one
 * ({@link UnusableAdminTokenFailureAnalyzer}).
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
        // Checked here first, so that the failure names the property (never the value).
        String token = properties.usableToken();
        return new AdminAuthorizationInterceptor(adminMethods.orderedStream().toList(), token, listener,
                new RefusedAdminCalls(properties.toRateLimit()));
    }
}
