package dev.grpcops.whoami;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.ServerSocket;
import java.time.Duration;
import java.util.Map;
import net.devh.boot.grpc.server.config.GrpcServerProperties;
import org.junit.jupiter.api.Test;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.core.env.MapPropertySource;
import org.springframework.core.env.StandardEnvironment;

/** The environment variables a container platform sets are honoured (design §5, §7). */
class WhoAmIConfigurationTests {

    @Test
    void portPodNameAndConnectionAgeComeFromTheEnvironment() {
        int port = freePort();
        try (ConfigurableApplicationContext context = run(
                Map.of("PORT", String.valueOf(port), "POD_NAME", "whoami-7d9f-abc", "MAX_CONNECTION_AGE_MS", "1000"))) {
            GrpcServerProperties server = context.getBean(GrpcServerProperties.class);
            assertThat(server.getPort()).isEqualTo(port);
            assertThat(server.getMaxConnectionAge()).isEqualTo(Duration.ofMillis(1000));
            assertThat(server.getMaxConnectionAgeGrace()).isEqualTo(Duration.ofMillis(5000));
            assertThat(context.getBean(WhoAmIProperties.class).podName()).isEqualTo("whoami-7d9f-abc");
        }
    }

    @Test
    void defaultsWithoutTheEnvironment() {
        try (ConfigurableApplicationContext context = run(Map.of("grpc.server.port", "0"))) {
            GrpcServerProperties server = context.getBean(GrpcServerProperties.class);
            assertThat(server.getMaxConnectionAge()).isNull();
            assertThat(context.getBean(WhoAmIProperties.class).podName()).isEqualTo("local");
        }
    }

    private static int freePort() {
        try (ServerSocket socket = new ServerSocket(0)) {
            return socket.getLocalPort();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    private static ConfigurableApplicationContext run(Map<String, Object> environment) {
        StandardEnvironment env = new StandardEnvironment();
        env.getPropertySources().addFirst(new MapPropertySource("test-env", environment));
        // Nothing here tests the drain; without a 0 s delay each close would wait the default 5 s.
        env.getPropertySources()
                .addFirst(new MapPropertySource("no-drain-delay", Map.of("grpcops.shutdown.drain-delay", "0s")));
        return new SpringApplicationBuilder(WhoAmIApplication.class)
                .environment(env)
                .properties("management.server.port=-1", "grpc.server.address=127.0.0.1")
                .run();
    }
}
