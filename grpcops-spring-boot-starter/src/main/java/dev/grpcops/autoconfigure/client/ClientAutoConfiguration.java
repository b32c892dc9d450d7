package dev.grpcops.autoconfigure.client;

import dev.grpcops.client.ReconnectNudger;
import dev.grpcops.spring.client.ChannelFollowers;
import dev.grpcops.spring.client.ChannelLayers;
import dev.grpcops.spring.client.ChannelServiceConfigs;
import dev.grpcops.spring.client.ClientConfiguration;
import dev.grpcops.spring.client.ClientProperties;
import java.util.List;
import net.devh.boot.grpc.client.channelfactory.GrpcChannelConfigurer;
import net.devh.boot.grpc.client.channelfactory.GrpcChannelFactory;
import net.devh.boot.grpc.client.channelfactory.InProcessChannelFactory;
import net.devh.boot.grpc.client.channelfactory.InProcessOrAlternativeChannelFactory;
import net.devh.boot.grpc.client.config.GrpcChannelsProperties;
import net.devh.boot.grpc.client.interceptor.GlobalClientInterceptorRegistry;
import org.slf4j.LoggerFactory;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingClass;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.context.annotation.Import;
import org.springframework.context.annotation.Lazy;

/**
 * Outgoing channels that balance by latency and load across every replica, eject failing ones, skip
 * draining ones and come back quickly: {@link ChannelServiceConfigs} for every channel
 * ({@code grpcops.client.balancing.*}, {@code grpcops.client.outlier-detection.*}, health checking for
 * the clients named in {@code grpcops.client.health-checked}), and net.devh's channel factory (shaded
 * or plain Netty, as net.devh picks it) with the {@link ReconnectNudger}. Backs off when the
 * application defines its own {@link GrpcChannelFactory}.
 */
@AutoConfiguration(beforeName = "net.devh.boot.grpc.client.autoconfigure.GrpcClientAutoConfiguration")
@ConditionalOnClass(GrpcChannelFactory.class)
@Import(ClientConfiguration.class)
public class ClientAutoConfiguration {

    static final String SHADED_NETTY = "io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder";
    static final String NETTY = "io.grpc.netty.NettyChannelBuilder";

    /** Each channel's balancing service config ({@link ChannelLayers}, in the order net.devh applies configurers). */
    @Bean
    GrpcChannelConfigurer grpcopsServiceConfigs(ChannelLayers layers) {
        return (builder, name) -> layers.serviceConfig(builder, name);
    }

    @Bean
    GrpcChannelConfigurer grpcopsDirectExecutor(ChannelLayers layers) {
        return (builder, name) -> layers.directExecutor(builder);
    }

    /** A cancellation budget per channel (grpcops.client.cancellations-per-second), with its counts as metrics. */
    @Bean
    GrpcChannelConfigurer grpcopsCancellationBudget(ChannelLayers layers) {
        return (builder, name) -> layers.cancellations(builder, name);
    }

    /** The balancer's decisions besides plain picks, per channel, as metrics (when there is a meter registry). */
    @Bean
    GrpcChannelConfigurer grpcopsBalancingMetrics(ChannelLayers layers) {
        return (builder, name) -> layers.balancingEvents(builder, name);
    }

    @Bean
    @ConditionalOnMissingBean
    ChannelReadiness channelReadiness(ChannelLayers layers) {
        return new ChannelReadiness(layers);
    }

    @Configuration(proxyBeanMethods = false)
    @ConditionalOnClass(name = SHADED_NETTY)
    static class ShadedNetty {

        /** A connection attempt gives up after grpcops.client.connect-timeout, not Netty's 30 s. */
        @Bean
        GrpcChannelConfigurer grpcopsConnectTimeout(ClientProperties properties) {
            int millis = (int) properties.getConnectTimeout().toMillis();
            return (builder, name) -> {
                if (builder instanceof io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder netty) {
                    netty.withOption(
                            io.grpc.netty.shaded.io.netty.channel.ChannelOption.CONNECT_TIMEOUT_MILLIS, millis);
                }
            };
        }

        @Bean
        @Lazy
        @ConditionalOnMissingBean(GrpcChannelFactory.class)
        GrpcChannelFactory reconnectingGrpcChannelFactory(
                GrpcChannelsProperties properties,
                GlobalClientInterceptorRegistry interceptors,
                List<GrpcChannelConfigurer> configurers,
                ReconnectNudger nudger,
                ChannelFollowers followers) {
            return inProcessOr(
                    new ShadedNettyReconnectingChannelFactory(properties, interceptors, configurers, nudger, followers),
                    properties,
                    interceptors,
                    configurers);
        }
    }

    @Configuration(proxyBeanMethods = false)
    @ConditionalOnMissingClass(SHADED_NETTY)
    @ConditionalOnClass(name = NETTY)
    static class PlainNetty {

        /** A connection attempt gives up after grpcops.client.connect-timeout, not Netty's 30 s. */
        @Bean
        GrpcChannelConfigurer grpcopsConnectTimeout(ClientProperties properties) {
            int millis = (int) properties.getConnectTimeout().toMillis();
            return (builder, name) -> {
                if (builder instanceof io.grpc.netty.NettyChannelBuilder netty) {
                    netty.withOption(io.netty.channel.ChannelOption.CONNECT_TIMEOUT_MILLIS, millis);
                }
            };
        }

        @Bean
        @Lazy
        @ConditionalOnMissingBean(GrpcChannelFactory.class)
        GrpcChannelFactory reconnectingGrpcChannelFactory(
                GrpcChannelsProperties properties,
                GlobalClientInterceptorRegistry interceptors,
                List<GrpcChannelConfigurer> configurers,
                ReconnectNudger nudger,
                ChannelFollowers followers) {
            return inProcessOr(
                    new NettyReconnectingChannelFactory(properties, interceptors, configurers, nudger, followers),
                    properties,
                    interceptors,
                    configurers);
        }
    }

    /** As net.devh arranges its own: {@code in-process:} targets in process, every other one through {@code netty}. */
    static GrpcChannelFactory inProcessOr(
            GrpcChannelFactory netty,
            GrpcChannelsProperties properties,
            GlobalClientInterceptorRegistry interceptors,
            List<GrpcChannelConfigurer> configurers) {
        return new InProcessOrAlternativeChannelFactory(
                properties, new InProcessChannelFactory(properties, interceptors, configurers), netty);
    }

    /** Without Netty net.devh makes in-process channels only: nothing to reconnect, but say so. */
    @Configuration(proxyBeanMethods = false)
    @ConditionalOnMissingClass({SHADED_NETTY, NETTY})
    static class NoNetty {

        NoNetty() {
            LoggerFactory.getLogger(ClientAutoConfiguration.class)
                    .info("grpcops.client: no Netty transport (grpc-netty-shaded or grpc-netty) on the classpath;"
                            + " channels are not nudged to reconnect");
        }
    }
}
