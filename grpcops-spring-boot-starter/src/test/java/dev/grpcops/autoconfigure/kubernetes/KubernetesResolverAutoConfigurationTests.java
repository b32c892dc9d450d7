package dev.grpcops.autoconfigure.kubernetes;

import static org.assertj.core.api.Assertions.assertThat;

import dev.grpcops.kubernetes.KubernetesNameResolverProvider;
import dev.grpcops.kubernetes.ResolverListener;
import dev.grpcops.spring.kubernetes.KubernetesResolverProperties;
import dev.grpcops.spring.kubernetes.KubernetesResolverRegistration;
import io.grpc.NameResolverRegistry;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Duration;
import net.devh.boot.grpc.client.autoconfigure.GrpcClientAutoConfiguration;
import org.junit.jupiter.api.Test;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.FilteredClassLoader;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.mock.env.MockEnvironment;

class KubernetesResolverAutoConfigurationTests {

    private final ApplicationContextRunner runner = new ApplicationContextRunner()
            .withConfiguration(
                    AutoConfigurations.of(KubernetesResolverAutoConfiguration.class, GrpcClientAutoConfiguration.class))
            .withUserConfiguration(Metrics.class);

    @Test
    void registersTheResolverWithMetricsInPlaceOfTheServiceLoaderOne() {
        runner.run(context -> {
            assertThat(context)
                    .hasSingleBean(KubernetesResolverRegistration.class)
                    .hasSingleBean(ResolverListener.class);
            KubernetesNameResolverProvider provider =
                    context.getBean(KubernetesResolverRegistration.class).provider();
            assertThat(NameResolverRegistry.getDefaultRegistry().getProviderForScheme("kubernetes"))
                    .isSameAs(provider);
            assertThat(NameResolverRegistry.getDefaultRegistry().getDefaultScheme())
                    .isEqualTo("dns");
            assertThat(context.getBean(KubernetesResolverProperties.class).getWatchReconnectInterval())
                    .isEqualTo(Duration.ofSeconds(1));
        });
        assertThat(NameResolverRegistry.getDefaultRegistry().getProviderForScheme("kubernetes"))
                .as("the ServiceLoader one, once the context is closed")
                .isInstanceOf(KubernetesNameResolverProvider.class);
    }

    @Test
    void theListenerIsMicrometers() {
        runner.run(context -> {
            ResolverListener listener = context.getBean(ResolverListener.class);
            MeterRegistry registry = context.getBean(MeterRegistry.class);
            String target = "kubernetes:///pricing.grpcops:grpc";
            listener.endpoints(target, 3);
            listener.watchError(target, new RuntimeException("down"));
            listener.watchError(target, new RuntimeException("down"));
            assertThat(registry.get("grpc.resolver.endpoints")
                            .tag("target", target)
                            .gauge()
                            .value())
                    .isEqualTo(3);
            listener.endpoints(target, 2);
            assertThat(registry.get("grpc.resolver.endpoints")
                            .tag("target", target)
                            .gauge()
                            .value())
                    .isEqualTo(2);
            assertThat(registry.get("grpc.resolver.watch.errors")
                            .tag("target", target)
                            .counter()
                            .count())
                    .isEqualTo(2);
            listener.closed(target);
            assertThat(registry.find("grpc.resolver.endpoints")
                            .tag("target", target)
                            .gauge())
                    .isNull();
        });
    }

    @Test
    void withoutTheModuleNothingHappens() {
        runner.withClassLoader(new FilteredClassLoader(KubernetesNameResolverProvider.class))
                .run(context -> assertThat(context)
                        .doesNotHaveBean(KubernetesResolverRegistration.class)
                        .doesNotHaveBean(ResolverListener.class));
    }

    @Test
    void canBeSwitchedOff() {
        runner.withPropertyValues("grpcops.kubernetes.enabled=false")
                .run(context -> assertThat(context).doesNotHaveBean(KubernetesResolverRegistration.class));
    }

    @Test
    void aBadReconnectIntervalStopsTheStartNamingTheProperty() {
        runner.withPropertyValues("grpcops.kubernetes.watch-reconnect-interval=0s")
                .run(context -> {
                    assertThat(context).hasFailed();
                    assertThat(context.getStartupFailure())
                            .rootCause()
                            .hasMessageContaining(
                                    "grpcops.kubernetes.watch-reconnect-interval must be 1 ms to 1 min, got PT0S");
                });
    }

    @Test
    void fabric8sPerRetryWarningsAreQuietedUnlessTheApplicationSaysOtherwise() {
        MockEnvironment environment =
                new MockEnvironment().withProperty("logging.level.io.fabric8.kubernetes.client.dsl.internal", "DEBUG");
        new KubernetesLoggingEnvironment().postProcessEnvironment(environment, null);
        assertThat(environment.getProperty("logging.level.io.fabric8.kubernetes.client.informers.impl.cache.Reflector"))
                .isEqualTo("ERROR");
        assertThat(environment.getProperty("logging.level.io.fabric8.kubernetes.client.dsl.internal"))
                .isEqualTo("DEBUG");
    }

    @Configuration(proxyBeanMethods = false)
    static class Metrics {

        @Bean
        MeterRegistry meterRegistry() {
            return new SimpleMeterRegistry();
        }
    }
}
