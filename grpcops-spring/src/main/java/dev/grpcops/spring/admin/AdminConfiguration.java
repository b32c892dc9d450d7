package dev.grpcops.spring.admin;

import dev.grpcops.admin.AdminAuthorization;
import dev.grpcops.admin.AdminListener;
import dev.grpcops.admin.AdminMethods;
import io.micrometer.core.instrument.MeterRegistry;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/**
 * Admin authorization's beans, whichever gRPC integration registers its interceptor: the listener
 * (Micrometer's when a meter registry is there) and {@link #authorization}, which each starter's
 * admin auto-configuration registers as the outermost global server interceptor. A token that is a
 * known placeholder or too short stops the service at start, saying how to set one
 * ({@link UnusableAdminTokenFailureAnalyzer}).
 */
@Configuration(proxyBeanMethods = false)
@EnableConfigurationProperties(AdminProperties.class)
public class AdminConfiguration {

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

    /**
     * Every {@link AdminMethods} bean's methods behind the bearer token of {@code
     * grpcops.admin.token}, refused calls rate-limited per caller address and logged in aggregate.
     */
    public static AdminAuthorization authorization(
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
