package dev.grpcops.springgrpc.kubernetes;

import dev.grpcops.spring.kubernetes.KubernetesResolverConfiguration;
import dev.grpcops.spring.kubernetes.KubernetesResolverRegistration;
import io.grpc.ManagedChannelBuilder;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnProperty;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Import;
import org.springframework.grpc.client.GrpcChannelBuilderCustomizer;

/**
 * The {@code kubernetes:///} resolver of {@code grpcops-kubernetes}, when a service has that module:
 * Spring gRPC channels ({@code spring.grpc.client.channel.NAME.target=kubernetes:///pricing.grpcops:grpc})
 * follow the Service's EndpointSlices, with {@code grpc_resolver_endpoints{target}} and {@code
 * grpc_resolver_watch_errors_total{target}}. Without the module, nothing happens.
 */
@AutoConfiguration(
        afterName = "org.springframework.boot.micrometer.metrics.autoconfigure.CompositeMeterRegistryAutoConfiguration")
@ConditionalOnClass(
        name = {
            "dev.grpcops.kubernetes.KubernetesNameResolverProvider",
            "org.springframework.boot.grpc.client.autoconfigure.GrpcClientAutoConfiguration"
        })
@ConditionalOnProperty(prefix = "grpcops.kubernetes", name = "enabled", matchIfMissing = true)
@Import(KubernetesResolverConfiguration.class)
public class KubernetesResolverAutoConfiguration {

    /**
     * A customizer that customizes nothing: Spring gRPC's channel factory takes every customizer,
     * so no channel is made before the resolver has registered.
     */
    @Bean
    <T extends ManagedChannelBuilder<T>> GrpcChannelBuilderCustomizer<T> grpcopsKubernetesResolver(
            KubernetesResolverRegistration registration) {
        return (channel, builder) -> {};
    }
}
