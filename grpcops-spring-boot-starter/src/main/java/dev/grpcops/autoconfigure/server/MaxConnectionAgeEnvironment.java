package dev.grpcops.autoconfigure.server;

import dev.grpcops.spring.server.MaxConnectionAge;
import java.util.Map;
import org.springframework.boot.SpringApplication;
import org.springframework.boot.env.EnvironmentPostProcessor;
import org.springframework.core.env.ConfigurableEnvironment;
import org.springframework.core.env.MapPropertySource;

/**
 * Turns the environment variable {@code MAX_CONNECTION_AGE_MS} (milliseconds, as Kubernetes
 * manifests set it) into net.devh's {@code grpc.server.max-connection-age}, whose bare numbers
 * would otherwise mean seconds, with a 5 s grace for calls in flight unless one is configured.
 * A value that is not a positive whole number stops startup with a message naming the variable.
 */
public final class MaxConnectionAgeEnvironment implements EnvironmentPostProcessor {

    public static final String VARIABLE = MaxConnectionAge.VARIABLE;

    @Override
    public void postProcessEnvironment(ConfigurableEnvironment environment, SpringApplication application) {
        String value = environment.getProperty(VARIABLE);
        if (value == null || value.isBlank()) {
            return;
        }
        long millis = MaxConnectionAge.millis(value);
        String grace = environment.getProperty("grpc.server.max-connection-age-grace", MaxConnectionAge.GRACE);
        // Added last: an explicit grpc.server.max-connection-age in any other source wins.
        environment
                .getPropertySources()
                .addLast(new MapPropertySource(
                        "grpcops-max-connection-age",
                        Map.of(
                                "grpc.server.max-connection-age",
                                millis + "ms",
                                "grpc.server.max-connection-age-grace",
                                grace)));
    }
}
