package dev.grpcops.autoconfigure.server;

import java.util.Map;
import org.springframework.boot.SpringApplication;
import org.springframework.boot.env.EnvironmentPostProcessor;
import org.springframework.core.env.ConfigurableEnvironment;
import org.springframework.core.env.MapPropertySource;

/**
 * One layer of gRPC metrics, bounded by what the service serves and calls: the interceptor
 * metrics ({@code grpc_server_processing_duration_seconds}, {@code grpc_server_requests_received_messages_total},
 * {@code grpc_server_responses_sent_messages_total} and their {@code grpc_client_*} twins) stay;
 * gRFC A66 stream-tracer metrics ({@code grpc.metricsA66Enabled}), which net.devh switches on, are
 * off unless the application turns them on: they tag every call with the method name the client
 * sent, served or not, so a client calling made-up names creates ~80 series per name until a
 * scrape runs the service out of memory. (Micrometer's observations of every call are on only while
 * traces are exported: see {@code TracingEnvironment}.)
 */
public final class GrpcMetricsEnvironment implements EnvironmentPostProcessor {

    static final String A66 = "grpc.metricsA66Enabled";

    @Override
    public void postProcessEnvironment(ConfigurableEnvironment environment, SpringApplication application) {
        // Added last: any setting of the application's own wins.
        environment.getPropertySources().addLast(new MapPropertySource("grpcops-grpc-metrics", Map.of(A66, "false")));
    }
}
