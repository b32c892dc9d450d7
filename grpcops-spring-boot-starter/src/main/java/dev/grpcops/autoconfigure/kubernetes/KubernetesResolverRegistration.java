package dev.grpcops.autoconfigure.kubernetes;

import dev.grpcops.kubernetes.KubernetesNameResolverProvider;
import dev.grpcops.kubernetes.ResolverListener;
import io.fabric8.kubernetes.client.Config;
import io.fabric8.kubernetes.client.ConfigBuilder;
import io.grpc.ManagedChannelBuilder;
import io.grpc.NameResolverRegistry;
import java.time.Duration;
import net.devh.boot.grpc.client.channelfactory.GrpcChannelConfigurer;
import org.springframework.beans.factory.DisposableBean;

/**
 * Puts a {@code kubernetes:///} provider with metrics in gRPC's default registry, in place of the
 * plain one ServiceLoader put there, and takes it out when the context closes. It is a channel
 * configurer (that configures nothing) so that net.devh's channel factory, which takes every
 * configurer, cannot make a channel before it has registered.
 */
final class KubernetesResolverRegistration implements GrpcChannelConfigurer, DisposableBean {

    private final KubernetesNameResolverProvider provider;

    KubernetesResolverRegistration(ResolverListener listener, Duration watchReconnectInterval) {
        // The client configuration is read when a channel first uses a kubernetes:/// target, not
        // here: a service whose targets are all dns:/// or static:// never looks for a cluster.
        this.provider = new KubernetesNameResolverProvider(
                () -> new ConfigBuilder(Config.autoConfigure(null))
                        .withWatchReconnectInterval((int) watchReconnectInterval.toMillis())
                        .build(),
                listener);
        NameResolverRegistry.getDefaultRegistry().register(provider);
    }

    KubernetesNameResolverProvider provider() {
        return provider;
    }

    @Override
    public void accept(ManagedChannelBuilder<?> builder, String name) {}

    @Override
    public void destroy() {
        NameResolverRegistry.getDefaultRegistry().deregister(provider);
    }
}
