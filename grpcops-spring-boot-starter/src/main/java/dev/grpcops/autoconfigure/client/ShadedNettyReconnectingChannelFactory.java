package dev.grpcops.autoconfigure.client;

import dev.grpcops.client.ReconnectNudger;
import dev.grpcops.spring.client.ChannelFollowers;
import io.grpc.ManagedChannel;
import java.util.List;
import net.devh.boot.grpc.client.channelfactory.GrpcChannelConfigurer;
import net.devh.boot.grpc.client.channelfactory.ShadedNettyChannelFactory;
import net.devh.boot.grpc.client.config.GrpcChannelsProperties;
import net.devh.boot.grpc.client.interceptor.GlobalClientInterceptorRegistry;

/** net.devh's shaded-Netty channel factory, with every channel it makes handed to the {@link ReconnectNudger} and to what its configurers put on it that follows it ({@link ChannelFollowers}). */
final class ShadedNettyReconnectingChannelFactory extends ShadedNettyChannelFactory {

    private final ReconnectNudger nudger;
    private final ChannelFollowers followers;

    ShadedNettyReconnectingChannelFactory(
            GrpcChannelsProperties properties,
            GlobalClientInterceptorRegistry interceptors,
            List<GrpcChannelConfigurer> configurers,
            ReconnectNudger nudger,
            ChannelFollowers followers) {
        super(properties, interceptors, configurers);
        this.nudger = nudger;
        this.followers = followers;
    }

    @Override
    protected ManagedChannel newManagedChannel(String name) {
        ManagedChannel channel = super.newManagedChannel(name);
        nudger.watch(channel);
        followers.follow(name, channel);
        return channel;
    }
}
