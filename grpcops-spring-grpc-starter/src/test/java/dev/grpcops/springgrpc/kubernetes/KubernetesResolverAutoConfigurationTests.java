package dev.grpcops.springgrpc.kubernetes;

import static org.assertj.core.api.Assertions.assertThat;

import dev.grpcops.kubernetes.KubernetesNameResolverProvider;
import dev.grpcops.kubernetes.ResolverListener;
import dev.grpcops.spring.kubernetes.KubernetesResolverRegistration;
import io.grpc.NameResolverRegistry;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.autoconfigure.ssl.SslAutoConfiguration;
import org.springframework.boot.grpc.client.autoconfigure.GrpcClientAutoConfiguration;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/** With grpcops-kubernetes on a Spring gRPC service, {@code kubernetes:///} is the library's resolver, with metrics. */
@Timeout(30)
class KubernetesResolverAutoConfigurationTests {

    private final ApplicationContextRunner runner = new ApplicationContextRunner()
            .withConfiguration(
                    AutoConfigurations.of(
                            KubernetesResolverAutoConfiguration.class,
                            GrpcClientAutoConfiguration.class,
                            SslAutoConfiguration.class))
            .withUserConfiguration(Metrics.class);

    @Configuration(proxyBeanMethods = false)
    static class Metrics {

        @Bean
        MeterRegistry meterRegistry() {
            return new SimpleMeterRegistry();
        }
    }

    @Test
    void registersTheResolverWithMetricsInPlaceOfTheServiceLoaderOne() {
        runner.run(context -> {
            KubernetesNameResolverProvider provider =
                    context.getBean(KubernetesResolverRegistration.class).provider();
            assertThat(NameResolverRegistry.getDefaultRegistry().getProviderForScheme("kubernetes"))
                    .isSameAs(provider);
            ResolverListener listener = context.getBean(ResolverListener.class);
            listener.endpoints("kubernetes:///pricing.grpcops:grpc", 3);
            assertThat(context.getBean(MeterRegistry.class)
                            .get("grpc.resolver.endpoints")
                            .tag("target", "kubernetes:///pricing.grpcops:grpc")
                            .gauge()
                            .value())
                    .isEqualTo(3);
        });
        assertThat(NameResolverRegistry.getDefaultRegistry().getProviderForScheme("kubernetes"))
                .as("the ServiceLoader one, once the context is closed")
                .isNotNull();
    }

    @Test
    void switchedOffNothingIsRegistered() {
        runner.withPropertyValues("grpcops.kubernetes.enabled=false")
                .run(context -> assertThat(context).doesNotHaveBean(KubernetesResolverRegistration.class));
    }
}
