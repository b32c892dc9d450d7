package dev.grpcops.spring.kubernetes;

import dev.grpcops.kubernetes.ResolverListener;
import io.micrometer.core.instrument.MeterRegistry;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/**
 * The {@code kubernetes:///} resolver registered with its listener (Micrometer's {@code grpc_resolver_endpoints{target}}
 * and {@code grpc_resolver_watch_errors_total{target}} when a meter registry is there) and its
 * {@code grpcops.kubernetes.*} properties, for each starter's resolver auto-configuration.
 */
@Configuration(proxyBeanMethods = false)
@EnableConfigurationProperties(KubernetesResolverProperties.class)
public class KubernetesResolverConfiguration {

    @Configuration(proxyBeanMethods = false)
    @ConditionalOnBean(MeterRegistry.class)
    static class Metrics {

        @Bean
        @ConditionalOnMissingBean
        ResolverListener micrometerResolverListener(MeterRegistry registry) {
            return new MicrometerResolverListener(registry);
        }
    }

    @Bean
    @ConditionalOnMissingBean
    ResolverListener resolverListener() {
        return ResolverListener.NONE;
    }

    @Bean
    @ConditionalOnMissingBean
    KubernetesResolverRegistration kubernetesResolverRegistration(
            ResolverListener listener, KubernetesResolverProperties properties) {
        return new KubernetesResolverRegistration(listener, properties.getWatchReconnectInterval());
    }
}
