package dev.grpcops.autoconfigure.client;

import dev.grpcops.client.CancellationBudget;
import dev.grpcops.client.ReconnectNudger;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
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
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
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
@EnableConfigurationProperties(ClientProperties.class)
public class ClientAutoConfiguration {

    static final String SHADED_NETTY = "io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder";
    static final String NETTY = "io.grpc.netty.NettyChannelBuilder";

    @Bean
    @ConditionalOnMissingBean
    ChannelServiceConfigs channelServiceConfigs(ClientProperties properties) {
        return new ChannelServiceConfigs(properties);
    }

    @Bean
    GrpcChannelConfigurer grpcopsDirectExecutor(ClientProperties properties) {
        return (builder, name) -> {
            if (properties.isDirectExecutor()) {
                builder.directExecutor();
            }
        };
    }

    @Bean
    @ConditionalOnMissingBean
    ChannelFollowers channelFollowers() {
        return new ChannelFollowers();
    }

    /** A cancellation budget per channel (grpcops.client.cancellations-per-second), with its counts as metrics. */
    @Bean
    GrpcChannelConfigurer grpcopsCancellationBudget(
            ClientProperties properties,
            org.springframework.beans.factory.ObjectProvider<MeterRegistry> registry,
            ChannelFollowers followers) {
        int perSecond = properties.getCancellationsPerSecond();
        if (perSecond < 0) {
            throw new IllegalArgumentException(
                    "grpcops.client.cancellations-per-second must be 0 (no budget) or more, got " + perSecond);
        }
        MeterRegistry meters = registry.getIfAvailable();
        CancellationBudget.CancellationListener listener = meters == null
                ? CancellationBudget.CancellationListener.NONE
                : new CancellationBudget.CancellationListener() {
                    private final java.util.Map<CancellationBudget.Outcome, Counter> counters = java.util.Arrays.stream(
                                    CancellationBudget.Outcome.values())
                            .collect(java.util.stream.Collectors.toMap(
                                    outcome -> outcome,
                                    outcome -> counter(meters, outcome.name().toLowerCase(java.util.Locale.ROOT)),
                                    (a, b) -> a,
                                    () -> new java.util.EnumMap<>(CancellationBudget.Outcome.class)));

                    @Override
                    public void cancelled(CancellationBudget.Outcome outcome) {
                        counters.get(outcome).increment();
                    }
                };
        return (builder, name) -> {
            if (perSecond > 0) {
                CancellationBudget budget = CancellationBudget.builder()
                        .perSecond(perSecond)
                        .burst(Math.max(1, perSecond / 2))
                        .listener(listener)
                        .build();
                if (meters != null) {
                    io.micrometer.core.instrument.Gauge.builder(
                                    "grpc.client.cancellations.waiting", budget, CancellationBudget::waiting)
                            .description("Deferred cancellations not sent yet, of calls still open downstream")
                            .tag("channel", name)
                            .register(meters);
                }
                builder.intercept(budget);
                followers.add(name, budget::follow);
            }
        };
    }

    /** The balancer's decisions besides plain picks, per channel, as metrics (when there is a meter registry). */
    @Bean
    GrpcChannelConfigurer grpcopsBalancingMetrics(
            org.springframework.beans.factory.ObjectProvider<MeterRegistry> registry) {
        return (builder, name) -> {
            MeterRegistry meters = registry.getIfAvailable();
            if (meters != null) {
                builder.intercept(new MicrometerBalancingListener(meters, name).interceptor());
            }
        };
    }

    private static Counter counter(MeterRegistry meters, String outcome) {
        return Counter.builder("grpc.client.cancellations")
                .description("Calls cancelled before they ended: the cancellation sent downstream at once, deferred"
                        + " (over the channel's budget), or sent later as the budget refilled")
                .tag("outcome", outcome)
                .register(meters);
    }

    @Bean
    @ConditionalOnMissingBean
    ChannelReadiness channelReadiness(ClientProperties properties, ChannelFollowers followers) {
        return new ChannelReadiness(properties.getWaitForReadyWindow(), followers);
    }

    @Bean(destroyMethod = "close")
    @ConditionalOnMissingBean
    ReconnectNudger reconnectNudger(ClientProperties properties) {
        return new ReconnectNudger(properties.getReconnectInterval());
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
