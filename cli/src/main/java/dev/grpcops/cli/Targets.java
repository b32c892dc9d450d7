package dev.grpcops.cli;

import dev.grpcops.client.ServiceConfigs;
import dev.grpcops.resolver.AddressListNameResolverProvider;
import io.grpc.ManagedChannel;
import io.grpc.ManagedChannelBuilder;
import java.util.Map;

/**
 * What a TARGET argument means: {@code host:port}, a gRPC name such as
 * {@code dns:///whoami-headless:50051}, or a list {@code a:p,b:p,c:p} of pod addresses.
 */
public final class Targets {

    private Targets() {}

    /** The gRPC target string for a TARGET argument. */
    static String grpcTarget(String target) {
        if (target.contains(",")) {
            for (String address : target.split(",")) {
                AddressListNameResolverProvider.socketAddress(address);
            }
            return AddressListNameResolverProvider.SCHEME + ":///" + target;
        }
        return target;
    }

    /** A plaintext channel to TARGET with {@code config} as its default service config. */
    public static ManagedChannel channel(String target, ChannelConfig config) {
        ManagedChannelBuilder<?> builder =
                ManagedChannelBuilder.forTarget(grpcTarget(target)).usePlaintext();
        Map<String, ?> serviceConfig = config.serviceConfig();
        if (!serviceConfig.isEmpty()) {
            builder.defaultServiceConfig(serviceConfig);
        }
        return builder.build();
    }

    /** The named channel configs of design §6. */
    public enum ChannelConfig {
        /** No config: pick_first, one connection. */
        pinned(Map.of()),
        /** round_robin over every resolved address. */
        rr(ServiceConfigs.roundRobin()),
        /** round_robin, skipping addresses whose grpcops.v1.WhoAmI health is not SERVING. */
        hc(ServiceConfigs.healthCheckedRoundRobin("grpcops.v1.WhoAmI"));

        private final Map<String, ?> serviceConfig;

        ChannelConfig(Map<String, ?> serviceConfig) {
            this.serviceConfig = serviceConfig;
        }

        Map<String, ?> serviceConfig() {
            return serviceConfig;
        }
    }
}
