package dev.grpcops.autoconfigure.server;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;

import java.util.Map;
import org.junit.jupiter.api.Test;
import org.springframework.core.env.MapPropertySource;
import org.springframework.core.env.StandardEnvironment;

class MaxConnectionAgeEnvironmentTests {

    private final MaxConnectionAgeEnvironment processor = new MaxConnectionAgeEnvironment();

    @Test
    void millisecondsBecomeTheServerMaxConnectionAgeWithFiveSecondsGrace() {
        StandardEnvironment env = env(Map.of("MAX_CONNECTION_AGE_MS", "1000"));
        processor.postProcessEnvironment(env, null);
        assertThat(env.getProperty("grpc.server.max-connection-age")).isEqualTo("1000ms");
        assertThat(env.getProperty("grpc.server.max-connection-age-grace")).isEqualTo("5000ms");
    }

    @Test
    void explicitPropertiesWin() {
        StandardEnvironment env = env(Map.of(
                "MAX_CONNECTION_AGE_MS",
                "1000",
                "grpc.server.max-connection-age",
                "10m",
                "grpc.server.max-connection-age-grace",
                "30s"));
        processor.postProcessEnvironment(env, null);
        assertThat(env.getProperty("grpc.server.max-connection-age")).isEqualTo("10m");
        assertThat(env.getProperty("grpc.server.max-connection-age-grace")).isEqualTo("30s");
    }

    @Test
    void unsetLeavesConnectionsAlone() {
        StandardEnvironment env = env(Map.of());
        processor.postProcessEnvironment(env, null);
        assertThat(env.getProperty("grpc.server.max-connection-age")).isNull();
    }

    @Test
    void nonsenseStopsStartupNamingTheVariable() {
        assertThatIllegalArgumentException()
                .isThrownBy(() -> processor.postProcessEnvironment(env(Map.of("MAX_CONNECTION_AGE_MS", "1s")), null))
                .withMessageContaining("MAX_CONNECTION_AGE_MS");
        assertThatIllegalArgumentException()
                .isThrownBy(() -> processor.postProcessEnvironment(env(Map.of("MAX_CONNECTION_AGE_MS", "0")), null))
                .withMessageContaining("MAX_CONNECTION_AGE_MS must be positive");
    }

    private static StandardEnvironment env(Map<String, Object> values) {
        StandardEnvironment env = new StandardEnvironment();
        env.getPropertySources().addFirst(new MapPropertySource("test", values));
        return env;
    }
}
