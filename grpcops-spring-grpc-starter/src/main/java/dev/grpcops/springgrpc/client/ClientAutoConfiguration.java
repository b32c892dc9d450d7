package dev.grpcops.springgrpc.client;

import dev.grpcops.client.ReconnectNudger;
import dev.grpcops.spring.client.ChannelFollowers;
import dev.grpcops.spring.client.ChannelLayers;
import dev.grpcops.spring.client.ChannelServiceConfigs;
import dev.grpcops.spring.client.ClientConfiguration;
import dev.grpcops.spring.client.ClientProperties;
import io.grpc.ManagedChannel;
import io.grpc.ManagedChannelBuilder;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import org.aopalliance.intercept.MethodInterceptor;
import org.springframework.aop.framework.ProxyFactory;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.beans.factory.config.BeanPostProcessor;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.grpc.client.autoconfigure.GrpcClientDefaultServiceConfigCustomizer;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.context.annotation.Import;
import org.springframework.core.env.Environment;
import org.springframework.grpc.client.GrpcChannelBuilderCustomizer;
import org.springframework.grpc.client.CompositeGrpcChannelFactory;
import org.springframework.grpc.client.GrpcChannelFactory;

/**
 * Spring gRPC's channels balance by latency and load across every replica, eject failing ones and
 * come back quickly ({@link ClientConfiguration}'s beans): the library's balancing joins the
 * default service config Spring gRPC builds for each channel (a {@link
 * GrpcClientDefaultServiceConfigCustomizer}, after {@code spring.grpc.client.channels.*}'s own
 * entries), and each channel's builder gets the readiness gate, the cancellation budget and the
 * balancing metrics ({@link ChannelLayers}), keyed by the channel's name as the application asks
 * for it. Every channel a channel factory makes is handed to what follows it ({@link ChannelFollowers}).
 */
@AutoConfiguration(afterName = "org.springframework.boot.micrometer.metrics.autoconfigure.CompositeMeterRegistryAutoConfiguration")
@ConditionalOnClass(name = "org.springframework.boot.grpc.client.autoconfigure.GrpcClientAutoConfiguration")
@Import(ClientConfiguration.class)
public class ClientAutoConfiguration {

    static final Duration KEEP_ALIVE_TIME = Duration.ofSeconds(10);
    static final Duration KEEP_ALIVE_TIMEOUT = Duration.ofSeconds(5);
    static final String SHADED_NETTY = "io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder";
    static final String NETTY = "io.grpc.netty.NettyChannelBuilder";

    /** The library's balancing in the channel's default service config. */
    @Bean
    GrpcClientDefaultServiceConfigCustomizer grpcopsServiceConfig(ChannelServiceConfigs configs) {
        return (channel, config) -> config.putAll(configs.serviceConfig(channel));
    }

    /**
     * Each channel's layers, and keepalive unless the application set the channel's own ({@code
     * spring.grpc.client.channel.NAME.keepalive.time}): a ping after 10 s without a read, also
     * without calls, the connection closed 5 s without an answer. A peer whose node dies or is cut
     * off sends no FIN and no RST; without keepalive its connection stays READY until TCP gives up,
     * about 15 minutes on Linux.
     */
    @Bean
    <T extends ManagedChannelBuilder<T>> GrpcChannelBuilderCustomizer<T> grpcopsChannelLayers(
            ChannelLayers layers, Environment environment) {
        return (channel, builder) -> {
            if (!environment.containsProperty("spring.grpc.client.channel." + channel + ".keepalive.time")) {
                builder.keepAliveTime(KEEP_ALIVE_TIME.toNanos(), TimeUnit.NANOSECONDS)
                        .keepAliveTimeout(KEEP_ALIVE_TIMEOUT.toNanos(), TimeUnit.NANOSECONDS)
                        .keepAliveWithoutCalls(true);
            }
            layers.directExecutor(builder);
            layers.perChannelLayers(builder, channel);
        };
    }

    /**
     * Every channel a {@link GrpcChannelFactory} makes is handed to its followers (its readiness gate
     * and cancellation budget watch its state) and to the {@link ReconnectNudger}. A class proxy: the factory keeps its own type.
     */
    @Bean
    static BeanPostProcessor grpcopsChannelFollowing(
            ObjectProvider<ChannelFollowers> followers, ObjectProvider<ReconnectNudger> nudger) {
        return new BeanPostProcessor() {
            @Override
            public Object postProcessAfterInitialization(Object bean, String beanName) {
                if (!(bean instanceof GrpcChannelFactory) || bean instanceof CompositeGrpcChannelFactory) {
                    return bean;
                }
                ProxyFactory proxy = new ProxyFactory(bean);
                proxy.setProxyTargetClass(true);
                proxy.addAdvice((MethodInterceptor) invocation -> {
                    Object made = invocation.proceed();
                    Object[] arguments = invocation.getArguments();
                    if (made instanceof ManagedChannel channel
                            && invocation.getMethod().getName().equals("createChannel")
                            && arguments.length == 2
                            && arguments[0] instanceof String name) {
                        nudger.getObject().watch(channel);
                        followers.getObject().follow(name, channel);
                    }
                    return made;
                });
                return proxy.getProxy(bean.getClass().getClassLoader());
            }
        };
    }

    @Configuration(proxyBeanMethods = false)
    @ConditionalOnClass(name = NETTY)
    static class PlainNetty {

        /** A connection attempt gives up after grpcops.client.connect-timeout, not Netty's 30 s. */
        @Bean
        <T extends ManagedChannelBuilder<T>> GrpcChannelBuilderCustomizer<T> grpcopsConnectTimeout(
                ClientProperties properties) {
            int millis = (int) properties.getConnectTimeout().toMillis();
            return (channel, builder) -> {
                if (builder instanceof io.grpc.netty.NettyChannelBuilder netty) {
                    netty.withOption(io.netty.channel.ChannelOption.CONNECT_TIMEOUT_MILLIS, millis);
                }
            };
        }
    }
}
