package dev.grpcops.spring.kubernetes;

import dev.grpcops.kubernetes.KubernetesNameResolverProvider;
import dev.grpcops.kubernetes.ResolverListener;
import io.fabric8.kubernetes.client.Config;
import io.fabric8.kubernetes.client.ConfigBuilder;
import io.grpc.NameResolverRegistry;
import java.time.Duration;
import org.springframework.beans.factory.DisposableBean;

/**
 * Puts a {@code kubernetes:///} provider with metrics in gRPC's default registry, in place of the
 * plain one ServiceLoader put there, and takes it out when the context closes. Each starter makes
 * its integration's channel customizers depend on it (one that customizes nothing), so that no
 * channel is made before it has registered.
 */
public final class KubernetesResolverRegistration implements DisposableBean {

    private final KubernetesNameResolverProvider provider;

    public KubernetesResolverRegistration(ResolverListener listener, Duration watchReconnectInterval) {
        // The client configuration is read when a channel first uses a kubernetes:/// target, not
        // here: a service whose targets are all dns:/// or static:// never looks for a cluster.
        this.provider = new KubernetesNameResolverProvider(
                () -> new ConfigBuilder(Config.autoConfigure(null))
                        .withWatchReconnectInterval((int) watchReconnectInterval.toMillis())
                        .build(),
                listener);
        NameResolverRegistry.getDefaultRegistry().register(provider);
    }

    /** The provider registered. */
    public KubernetesNameResolverProvider provider() {
        return provider;
    }

    @Override
    public void destroy() {
        NameResolverRegistry.getDefaultRegistry().deregister(provider);
    }
}
