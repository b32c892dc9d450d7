package dev.grpcops.kubernetes;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.client.Config;
import io.grpc.NameResolverRegistry;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class KubernetesNameResolverProviderTests {

    @Test
    void serviceLoaderRegistersItBelowDns() {
        NameResolverRegistry registry = NameResolverRegistry.getDefaultRegistry();
        assertThat(registry.getProviderForScheme(KubernetesNameResolverProvider.SCHEME))
                .isInstanceOf(KubernetesNameResolverProvider.class);
        assertThat(registry.getDefaultScheme()).isEqualTo("dns");
    }

    @Test
    void oneMadeWithAListenerReplacesTheServiceLoaderOneAndDnsStaysTheDefault() {
        NameResolverRegistry registry = NameResolverRegistry.getDefaultRegistry();
        KubernetesNameResolverProvider configured =
                new KubernetesNameResolverProvider(Config::empty, ResolverListener.NONE);
        registry.register(configured);
        try {
            assertThat(registry.getProviderForScheme(KubernetesNameResolverProvider.SCHEME))
                    .isSameAs(configured);
            assertThat(registry.getDefaultScheme()).isEqualTo("dns");
        } finally {
            registry.deregister(configured);
        }
        assertThat(registry.getProviderForScheme(KubernetesNameResolverProvider.SCHEME))
                .isNotSameAs(configured);
    }

    @Test
    void aTargetWithoutNamespaceMeansThePodsOwn(@TempDir Path dir) throws Exception {
        Path file = dir.resolve("namespace");
        Files.writeString(file, "shop\n");
        assertThat(PodNamespace.of(file, "from-kubeconfig")).isEqualTo("shop");
        assertThat(PodNamespace.of(dir.resolve("missing"), "from-kubeconfig")).isEqualTo("from-kubeconfig");
        assertThat(PodNamespace.of(dir.resolve("missing"), null)).isEqualTo("default");
    }
}
