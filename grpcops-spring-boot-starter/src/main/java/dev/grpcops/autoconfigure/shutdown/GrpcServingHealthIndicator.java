package dev.grpcops.autoconfigure.shutdown;

import dev.grpcops.spring.shutdown.ServingStatusPublisher;
import java.util.Map;
import org.springframework.boot.actuate.health.AbstractHealthIndicator;
import org.springframework.boot.actuate.health.Health;

/**
 * Actuator's view of the gRPC health service, {@code /actuator/health/grpcServing}: {@code UP} once
 * the server listens and every served name answers {@code SERVING}; {@code OUT_OF_SERVICE} (HTTP
 * 503) before that and from the moment a drain begins. Probes that cannot speak gRPC cheaply, such
 * as a container healthcheck, ask this instead of starting a gRPC client per check; both read the
 * same state.
 */
final class GrpcServingHealthIndicator extends AbstractHealthIndicator {

    private final ServingStatusPublisher publisher;

    GrpcServingHealthIndicator(ServingStatusPublisher publisher) {
        super("gRPC serving status check failed");
        this.publisher = publisher;
    }

    @Override
    protected void doHealthCheck(Health.Builder builder) {
        Map<String, Boolean> names = publisher.servingByName();
        names.forEach((name, serving) -> builder.withDetail(name, serving ? "SERVING" : "NOT_SERVING"));
        if (names.isEmpty()) {
            builder.withDetail("server", "not listening yet");
        }
        (publisher.allServing() ? builder.up() : builder.outOfService()).build();
    }
}
