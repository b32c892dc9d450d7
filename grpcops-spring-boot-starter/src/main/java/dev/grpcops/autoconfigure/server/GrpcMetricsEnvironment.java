package dev.grpcops.autoconfigure.server;

import java.util.Map;
import org.springframework.boot.SpringApplication;
import org.springframework.boot.env.EnvironmentPostProcessor;
import org.springframework.core.env.ConfigurableEnvironment;
import org.springframework.core.env.MapPropertySource;

/**
 * Turns net.devh's gRFC A66 stream-tracer metrics off unless the application turns them on
 * ({@code grpc.metricsA66Enabled=true}). They tag every call with the method name the client
 * sent, served or not, so a client calling made-up names creates ~80 series per name until a
 * scrape runs the service out of memory; and they are a second layer of gRPC metrics on every
 * call. The interceptor metrics ({@code grpc_server_processing_duration_seconds},
 * {@code grpc_server_requests_received_messages_total}, {@code grpc_server_responses_sent_messages_total},
 * and their client twins) stay: they know only the methods the server serves.
 */
public final class BoundedMetricsEnvironment implements EnvironmentPostProcessor {

    static final String A66 = "grpc.metricsA66Enabled";

    @Override
    public void postProcessEnvironment(ConfigurableEnvironment environment, SpringApplication application) {
        // Added last: any setting of the application's own wins.
        environment.getPropertySources().addLast(new MapPropertySource("grpcops-bounded-metrics", Map.of(A66, "false")));
    }
}
