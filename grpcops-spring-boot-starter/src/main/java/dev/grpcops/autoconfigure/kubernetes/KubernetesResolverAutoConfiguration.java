package dev.grpcops.autoconfigure.kubernetes;

import dev.grpcops.kubernetes.KubernetesNameResolverProvider;
import dev.grpcops.spring.kubernetes.KubernetesResolverConfiguration;
import dev.grpcops.spring.kubernetes.KubernetesResolverRegistration;
import net.devh.boot.grpc.client.channelfactory.GrpcChannelConfigurer;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnProperty;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Import;

/**
 * The {@code kubernetes:///} resolver of {@code grpcops-kubernetes}, when a service has that module:
 * channels (net.devh's {@code grpc.client.NAME.address=kubernetes:///pricing.grpcops:grpc}) follow
 * the Service's EndpointSlices, with {@code grpc_resolver_endpoints{target}} and
 * {@code grpc_resolver_watch_errors_total{target}}. Without the module, nothing happens.
 */
@AutoConfiguration(
        afterName = "org.springframework.boot.actuate.autoconfigure.metrics.CompositeMeterRegistryAutoConfiguration")
@ConditionalOnClass({KubernetesNameResolverProvider.class, GrpcChannelConfigurer.class})
@ConditionalOnProperty(prefix = "grpcops.kubernetes", name = "enabled", matchIfMissing = true)
@Import(KubernetesResolverConfiguration.class)
public class KubernetesResolverAutoConfiguration {

    /**
     * A configurer that configures nothing: net.devh's channel factory takes every configurer, so no
     * channel is made before the resolver has registered.
     */
    @Bean
    GrpcChannelConfigurer grpcopsKubernetesResolver(KubernetesResolverRegistration registration) {
        return (builder, name) -> {};
    }
}
