package dev.grpcops.autoconfigure.drain;

import dev.grpcops.InfrastructureServices;
import io.grpc.ServerServiceDefinition;
import io.grpc.health.v1.HealthCheckResponse.ServingStatus;
import io.grpc.protobuf.services.HealthStatusManager;
import java.util.List;
import net.devh.boot.grpc.server.event.GrpcServerStartedEvent;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.context.event.EventListener;

/**
 * Once the server listens, reports every service it serves as {@code SERVING} under its own
 * name in the standard health service, beside {@code ""} (the process). Kubernetes readiness
 * probes and client-side health checking ask for these names; liveness asks for {@code ""}.
 */
final class ServingStatusPublisher {

    private static final Logger log = LoggerFactory.getLogger(ServingStatusPublisher.class);

    private final HealthStatusManager health;

    ServingStatusPublisher(HealthStatusManager health) {
        this.health = health;
    }

    @EventListener
    void serverStarted(GrpcServerStartedEvent event) {
        List<String> published = event.getServer().getServices().stream()
                .map(ServerServiceDefinition::getServiceDescriptor)
                .map(descriptor -> descriptor.getName())
                .filter(name -> !InfrastructureServices.NAMES.contains(name))
                .toList();
        published.forEach(name -> health.setStatus(name, ServingStatus.SERVING));
        log.info("health: SERVING for \"\" and {}", published);
    }
}
