package dev.grpcops.springgrpc.server;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;

import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.springframework.core.env.MapPropertySource;
import org.springframework.core.env.StandardEnvironment;

@Timeout(10)
class ServerDefaultsEnvironmentTests {

    private static StandardEnvironment environment(Map<String, Object> properties) {
        StandardEnvironment environment = new StandardEnvironment();
        environment.getPropertySources().addFirst(new MapPropertySource("test", properties));
        new ServerDefaultsEnvironment().postProcessEnvironment(environment, null);
        return environment;
    }

    @Test
    void pingsArePermittedEveryFiveSecondsUnlessTheApplicationSaysOtherwise() {
        assertThat(environment(Map.of()).getProperty("spring.grpc.server.keepalive.permit.time"))
                .isEqualTo("5s");
        assertThat(environment(Map.of()).getProperty("spring.grpc.server.keepalive.permit.without-calls"))
                .isEqualTo("true");
        assertThat(environment(Map.of("spring.grpc.server.keepalive.permit.time", "1m"))
                        .getProperty("spring.grpc.server.keepalive.permit.time"))
                .isEqualTo("1m");
    }

    @Test
    void maxConnectionAgeMsBecomesSpringGrpcsMaxAgeInMillisecondsWithAGrace() {
        StandardEnvironment environment = environment(Map.of("MAX_CONNECTION_AGE_MS", "30000"));
        assertThat(environment.getProperty("spring.grpc.server.keepalive.connection.max-age"))
                .isEqualTo("30000ms");
        assertThat(environment.getProperty("spring.grpc.server.keepalive.connection.grace-period"))
                .isEqualTo("5000ms");
        assertThat(environment(Map.of()).containsProperty("spring.grpc.server.keepalive.connection.max-age"))
                .isFalse();
    }

    @Test
    void aMaxConnectionAgeThatIsNotAPositiveNumberStopsTheStartNamingTheVariable() {
        assertThatIllegalArgumentException()
                .isThrownBy(() -> environment(Map.of("MAX_CONNECTION_AGE_MS", "30s")))
                .withMessageContaining("MAX_CONNECTION_AGE_MS");
        assertThatIllegalArgumentException()
                .isThrownBy(() -> environment(Map.of("MAX_CONNECTION_AGE_MS", "0")))
                .withMessageContaining("MAX_CONNECTION_AGE_MS");
    }
}
