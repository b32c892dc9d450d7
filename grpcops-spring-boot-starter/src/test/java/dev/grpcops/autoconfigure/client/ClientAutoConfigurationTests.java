package dev.grpcops.autoconfigure.client;

import static org.assertj.core.api.Assertions.assertThat;

import dev.grpcops.client.ReconnectNudger;
import dev.grpcops.spring.client.ChannelServiceConfigs;
import dev.grpcops.spring.client.ClientProperties;
import dev.grpcops.spring.client.MicrometerBalancingListener;
import io.grpc.ManagedChannelBuilder;
import java.time.Duration;
import java.util.Map;
import net.devh.boot.grpc.client.autoconfigure.GrpcClientAutoConfiguration;
import net.devh.boot.grpc.client.channelfactory.GrpcChannelConfigurer;
import net.devh.boot.grpc.client.channelfactory.GrpcChannelFactory;
import net.devh.boot.grpc.client.channelfactory.InProcessChannelFactory;
import net.devh.boot.grpc.client.config.GrpcChannelsProperties;
import net.devh.boot.grpc.client.interceptor.GlobalClientInterceptorRegistry;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.FilteredClassLoader;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

class ClientAutoConfigurationTests {

    private final ApplicationContextRunner runner = new ApplicationContextRunner()
            .withConfiguration(AutoConfigurations.of(ClientAutoConfiguration.class, GrpcClientAutoConfiguration.class));

    @Test
    void shadedNettyChannelsAreNudgedByDefault() {
        runner.run(context -> {
            assertThat(context)
                    .hasSingleBean(ReconnectNudger.class)
                    .hasSingleBean(ChannelServiceConfigs.class)
                    .hasSingleBean(ClientAutoConfiguration.ShadedNetty.class)
                    .doesNotHaveBean(ClientAutoConfiguration.PlainNetty.class);
            assertThat(context.getBean(ClientProperties.class).getReconnectInterval())
                    .isEqualTo(Duration.ofMillis(500));
            assertThat(context.getBean(GrpcChannelFactory.class)).isNotNull();
        });
    }

    @Test
    void plainNettyChannelsAreNudgedToo() {
        runner.withClassLoader(new FilteredClassLoader(ClientAutoConfiguration.SHADED_NETTY))
                .run(context -> {
                    assertThat(context)
                            .hasSingleBean(ClientAutoConfiguration.PlainNetty.class)
                            .doesNotHaveBean(ClientAutoConfiguration.ShadedNetty.class);
                    assertThat(context.getBean(GrpcChannelFactory.class)).isNotNull();
                });
    }

    @Test
    void withoutNettyItSaysSoInsteadOfDisappearing() {
        runner.withClassLoader(
                        new FilteredClassLoader(ClientAutoConfiguration.SHADED_NETTY, ClientAutoConfiguration.NETTY))
                .run(context -> assertThat(context)
                        .hasSingleBean(ClientAutoConfiguration.NoNetty.class)
                        .hasSingleBean(ReconnectNudger.class));
    }

    @Test
    void everyChannelGetsPeakEwmaUnderOutlierDetectionAndNamedOnesHealthChecking() {
        runner.withPropertyValues(
                        "grpcops.client.health-checked.stock=chain.v1.Stock", "grpcops.client.reconnect-interval=0")
                .run(context -> {
                    assertThat(context.getBean(ClientProperties.class).getReconnectInterval())
                            .isZero();
                    RecordingBuilder builder = new RecordingBuilder();
                    context.getBean(ChannelServiceConfigs.class).accept(builder, "stock");
                    assertThat(builder.serviceConfig)
                            .containsEntry("healthCheckConfig", Map.of("serviceName", "chain.v1.Stock"));
                    assertThat(builder.serviceConfig.get("loadBalancingConfig").toString())
                            .contains("grpcops_peak_ewma", "outlierDetection", "maxEjectionPercent=33.0")
                            .doesNotContain("outlier_detection_experimental");
                    RecordingBuilder other = new RecordingBuilder();
                    context.getBean(ChannelServiceConfigs.class).accept(other, "pricing");
                    assertThat(other.serviceConfig)
                            .doesNotContainKey("healthCheckConfig")
                            .containsKey("loadBalancingConfig");
                });
    }

    @Test
    void roundRobinWithoutOutlierDetectionIsSelectable() {
        runner.withPropertyValues(
                        "grpcops.client.balancing.policy=round-robin", "grpcops.client.outlier-detection.enabled=false")
                .run(context -> {
                    RecordingBuilder builder = new RecordingBuilder();
                    context.getBean(ChannelServiceConfigs.class).accept(builder, "stock");
                    assertThat(builder.serviceConfig.get("loadBalancingConfig").toString())
                            .contains("grpcops_round_robin")
                            .doesNotContain("outlierDetection");
                });
    }

    @Test
    void slowStartAndTheFullViewAreSetByProperties() {
        runner.withPropertyValues(
                        "grpcops.client.balancing.slow-start=30s", "grpcops.client.balancing.compare-all-up-to=3")
                .run(context -> {
                    RecordingBuilder builder = new RecordingBuilder();
                    context.getBean(ChannelServiceConfigs.class).accept(builder, "stock");
                    assertThat(builder.serviceConfig.get("loadBalancingConfig").toString())
                            .contains("slowStart=30.0s", "compareAllUpTo=3.0");
                });
    }

    @ParameterizedTest(name = "{0}={1}")
    @CsvSource({"slow-start, -1s", "compare-all-up-to, -1"})
    void badBalancingSettingsStopTheStartNamingTheProperty(String property, String value) {
        runner.withPropertyValues("grpcops.client.balancing." + property + "=" + value)
                .run(context -> assertThat(context)
                        .getFailure()
                        .rootCause()
                        .hasMessageContaining("grpcops.client.balancing." + property));
    }

    @Test
    void eachChannelsBalancingDecisionsAreCountedTaggedWithTheChannel() {
        io.micrometer.core.instrument.simple.SimpleMeterRegistry registry =
                new io.micrometer.core.instrument.simple.SimpleMeterRegistry();
        runner.withBean(io.micrometer.core.instrument.simple.SimpleMeterRegistry.class, () -> registry)
                .run(context -> {
                    RecordingBuilder builder = new RecordingBuilder();
                    context.getBean("grpcopsBalancingMetrics", GrpcChannelConfigurer.class)
                            .accept(builder, "stock");
                    assertThat(builder.interceptors).hasSize(1);
                    assertThat(registry.get("grpc.client.picks.passed.over")
                                    .tags("channel", "stock", "reason", "deadline")
                                    .counter()
                                    .count())
                            .as("there before anything happens")
                            .isZero();
                    assertThat(registry.get("grpc.client.probes")
                                    .tag("channel", "stock")
                                    .counter())
                            .isNotNull();
                    assertThat(registry.get("grpc.client.slow.starts")
                                    .tag("channel", "stock")
                                    .counter())
                            .isNotNull();
                    assertThat(registry.get("grpc.client.ejections")
                                    .tag("channel", "stock")
                                    .counter()
                                    .count())
                            .isZero();
                    assertThat(registry.get("grpc.client.ejected.replicas")
                                    .tag("channel", "stock")
                                    .gauge()
                                    .value())
                            .isZero();
                });
        runner.run(context -> {
            RecordingBuilder builder = new RecordingBuilder();
            context.getBean("grpcopsBalancingMetrics", GrpcChannelConfigurer.class)
                    .accept(builder, "stock");
            assertThat(builder.interceptors)
                    .as("no meter registry: nothing to count")
                    .isEmpty();
        });
    }

    @Test
    void theListenerCountsEachDecisionUnderItsReason() {
        io.micrometer.core.instrument.simple.SimpleMeterRegistry registry =
                new io.micrometer.core.instrument.simple.SimpleMeterRegistry();
        MicrometerBalancingListener listener = new MicrometerBalancingListener(registry, "pricing");
        listener.passedOver(dev.grpcops.client.BalancingListener.PassedOver.LATENCY);
        listener.passedOver(dev.grpcops.client.BalancingListener.PassedOver.DEADLINE);
        listener.passedOver(dev.grpcops.client.BalancingListener.PassedOver.DEADLINE);
        listener.probed();
        listener.slowStartBegan();
        assertThat(registry.get("grpc.client.picks.passed.over")
                        .tags("channel", "pricing", "reason", "latency")
                        .counter()
                        .count())
                .isEqualTo(1);
        assertThat(registry.get("grpc.client.picks.passed.over")
                        .tags("channel", "pricing", "reason", "deadline")
                        .counter()
                        .count())
                .isEqualTo(2);
        assertThat(registry.get("grpc.client.probes").counter().count()).isEqualTo(1);
        assertThat(registry.get("grpc.client.slow.starts").counter().count()).isEqualTo(1);

        listener.ejected();
        listener.ejected();
        listener.returned();
        assertThat(registry.get("grpc.client.ejections")
                        .tag("channel", "pricing")
                        .counter()
                        .count())
                .isEqualTo(2);
        assertThat(registry.get("grpc.client.ejected.replicas")
                        .tag("channel", "pricing")
                        .gauge()
                        .value())
                .as("two out, one back")
                .isEqualTo(1);
    }

    @Test
    void badOutlierDetectionStopsTheStartNamingTheProperty() {
        runner.withPropertyValues("grpcops.client.outlier-detection.max-ejection-percent=150")
                .run(context -> assertThat(context)
                        .getFailure()
                        .rootCause()
                        .hasMessageContaining("grpcops.client.outlier-detection"));
    }

    @Test
    void backsOffWhenTheApplicationDefinesItsOwnChannelFactory() {
        runner.withUserConfiguration(OwnChannelFactory.class).run(context -> {
            assertThat(context).hasSingleBean(GrpcChannelFactory.class);
            assertThat(context.getBean(GrpcChannelFactory.class)).isInstanceOf(InProcessChannelFactory.class);
        });
    }

    @Configuration(proxyBeanMethods = false)
    static class OwnChannelFactory {

        @Bean
        GrpcChannelFactory myChannelFactory(
                GrpcChannelsProperties properties, GlobalClientInterceptorRegistry interceptors) {
            return new InProcessChannelFactory(properties, interceptors);
        }
    }

    /** A builder that only remembers its default service config. */
    private static final class RecordingBuilder extends io.grpc.ForwardingChannelBuilder2<RecordingBuilder> {

        Map<String, Object> serviceConfig;
        final java.util.List<io.grpc.ClientInterceptor> interceptors = new java.util.ArrayList<>();

        @Override
        protected ManagedChannelBuilder<?> delegate() {
            throw new UnsupportedOperationException();
        }

        @Override
        public RecordingBuilder intercept(io.grpc.ClientInterceptor... interceptors) {
            this.interceptors.addAll(java.util.List.of(interceptors));
            return this;
        }

        @Override
        public RecordingBuilder defaultServiceConfig(Map<String, ?> serviceConfig) {
            this.serviceConfig = Map.copyOf(serviceConfig);
            return this;
        }
    }
}
