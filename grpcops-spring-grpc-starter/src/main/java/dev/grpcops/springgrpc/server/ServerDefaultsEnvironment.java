package dev.grpcops.springgrpc.server;

import dev.grpcops.spring.server.MaxConnectionAge;
import java.util.LinkedHashMap;
import java.util.Map;
import org.springframework.boot.EnvironmentPostProcessor;
import org.springframework.boot.SpringApplication;
import org.springframework.core.env.ConfigurableEnvironment;
import org.springframework.core.env.MapPropertySource;

/**
 * Spring gRPC server defaults a service on Kubernetes needs, as Spring gRPC's own properties added
 * last (whatever the application sets wins):
 *
 * <ul>
 *   <li>pings permitted every 5 s, also without calls ({@code spring.grpc.server.keepalive.permit.*}):
 *       the library's channels ping after 10 s without a read, and grpc-java's default (5 minutes,
 *       none without calls) would answer them GOAWAY {@code too_many_pings};
 *   <li>the environment variable {@code MAX_CONNECTION_AGE_MS} as {@code
 *       spring.grpc.server.keepalive.connection.max-age}, with a 5 s grace unless one is set, so that
 *       clients re-resolve and spread over new pods.
 * </ul>
 */
public final class ServerDefaultsEnvironment implements EnvironmentPostProcessor {

    static final String PERMIT_TIME = "5s";

    @Override
    public void postProcessEnvironment(ConfigurableEnvironment environment, SpringApplication application) {
        Map<String, Object> defaults = new LinkedHashMap<>();
        defaults.put("spring.grpc.server.keepalive.permit.time", PERMIT_TIME);
        defaults.put("spring.grpc.server.keepalive.permit.without-calls", "true");
        String maxAge = environment.getProperty(MaxConnectionAge.VARIABLE);
        if (maxAge != null && !maxAge.isBlank()) {
            defaults.put("spring.grpc.server.keepalive.connection.max-age", MaxConnectionAge.millis(maxAge) + "ms");
            defaults.put("spring.grpc.server.keepalive.connection.grace-period", MaxConnectionAge.GRACE);
        }
        environment.getPropertySources().addLast(new MapPropertySource("grpcops-server-defaults", defaults));
    }
}
