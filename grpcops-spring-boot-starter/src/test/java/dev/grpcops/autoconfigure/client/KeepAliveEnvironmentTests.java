package dev.grpcops.autoconfigure.client;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.Map;
import net.devh.boot.grpc.client.config.GrpcChannelsProperties;
import net.devh.boot.grpc.server.config.GrpcServerProperties;
import org.junit.jupiter.api.Test;
import org.springframework.boot.SpringApplication;
import org.springframework.boot.context.properties.bind.Binder;
import org.springframework.core.env.MapPropertySource;
import org.springframework.core.env.StandardEnvironment;

/** Keepalive on by default on every channel, permitted by every server; what the application sets wins. */
class KeepAliveEnvironmentTests {

    private static StandardEnvironment environment(Map<String, Object> own) {
        StandardEnvironment environment = new StandardEnvironment();
        environment.getPropertySources().addFirst(new MapPropertySource("application", own));
        new KeepAliveEnvironment().postProcessEnvironment(environment, new SpringApplication());
        return environment;
    }

    private static GrpcChannelsProperties channels(StandardEnvironment environment) {
        return Binder.get(environment)
                .bind("grpc", GrpcChannelsProperties.class)
                .get();
    }

    @Test
    void everyChannelPingsAndEveryServerPermitsIt() {
        StandardEnvironment environment = environment(Map.of("grpc.client.stock.address", "dns:///stock:50061"));
        var stock = channels(environment).getChannel("stock");
        assertThat(stock.isEnableKeepAlive()).isTrue();
        assertThat(stock.getKeepAliveTime()).hasSeconds(10);
        assertThat(stock.getKeepAliveTimeout()).hasSeconds(5);
        assertThat(stock.isKeepAliveWithoutCalls()).isTrue();
        GrpcServerProperties server = Binder.get(environment)
                .bind("grpc.server", GrpcServerProperties.class)
                .get();
        assertThat(server.getPermitKeepAliveTime())
                .as("at most the clients' keepalive time")
                .isLessThanOrEqualTo(stock.getKeepAliveTime());
        assertThat(server.isPermitKeepAliveWithoutCalls()).isTrue();
    }

    @Test
    void whatTheApplicationSetsWins() {
        StandardEnvironment environment = environment(Map.of(
                "grpc.client.stock.keep-alive-time", "60s",
                "grpc.client.GLOBAL.enable-keep-alive", "false",
                "grpc.server.permit-keep-alive-time", "1m"));
        var stock = channels(environment).getChannel("stock");
        assertThat(stock.getKeepAliveTime()).hasSeconds(60);
        assertThat(stock.isEnableKeepAlive()).isFalse();
        assertThat(Binder.get(environment)
                        .bind("grpc.server", GrpcServerProperties.class)
                        .get()
                        .getPermitKeepAliveTime())
                .hasMinutes(1);
    }
}
