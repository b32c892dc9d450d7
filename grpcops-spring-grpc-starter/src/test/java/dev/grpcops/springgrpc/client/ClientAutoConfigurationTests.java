package dev.grpcops.springgrpc.client;

import static org.assertj.core.api.Assertions.assertThat;
import static org.mockito.ArgumentMatchers.anyLong;
import static org.mockito.ArgumentMatchers.any;
import static org.mockito.Mockito.RETURNS_SELF;
import static org.mockito.Mockito.mock;
import static org.mockito.Mockito.never;
import static org.mockito.Mockito.verify;

import io.grpc.ManagedChannelBuilder;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.autoconfigure.ssl.SslAutoConfiguration;
import org.springframework.boot.grpc.client.autoconfigure.GrpcClientAutoConfiguration;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.grpc.client.GrpcChannelBuilderCustomizer;

/** What every Spring gRPC channel's builder gets from the starter, and what the application's settings keep. */
@Timeout(30)
class ClientAutoConfigurationTests {

    private final ApplicationContextRunner runner = new ApplicationContextRunner()
            .withConfiguration(AutoConfigurations.of(
                    ClientAutoConfiguration.class, GrpcClientAutoConfiguration.class, SslAutoConfiguration.class));

    @SuppressWarnings({"unchecked", "rawtypes"})
    private static ManagedChannelBuilder<?> customized(
            org.springframework.context.ApplicationContext context, String channel) {
        ManagedChannelBuilder builder = mock(ManagedChannelBuilder.class, RETURNS_SELF);
        GrpcChannelBuilderCustomizer customizer = context.getBean("grpcopsChannelLayers", GrpcChannelBuilderCustomizer.class);
        customizer.customize(channel, builder);
        return builder;
    }

    @Test
    void everyChannelPingsAfterTenSecondsWithoutARead() {
        runner.run(context -> {
            ManagedChannelBuilder<?> builder = customized(context, "stock");
            verify(builder).keepAliveTime(TimeUnit.SECONDS.toNanos(10), TimeUnit.NANOSECONDS);
            verify(builder).keepAliveTimeout(TimeUnit.SECONDS.toNanos(5), TimeUnit.NANOSECONDS);
            verify(builder).keepAliveWithoutCalls(true);
            // the readiness gate and the cancellation budget, on by default
            verify(builder, org.mockito.Mockito.atLeast(2)).intercept(any(io.grpc.ClientInterceptor[].class));
        });
    }

    @Test
    void aChannelWhoseKeepaliveTheApplicationSetKeepsIt() {
        runner.withPropertyValues("spring.grpc.client.channel.stock.keepalive.time=1m").run(context -> {
            ManagedChannelBuilder<?> builder = customized(context, "stock");
            verify(builder, never()).keepAliveTime(anyLong(), any());
            assertThat(context).hasBean("grpcopsServiceConfig");
        });
    }
}
