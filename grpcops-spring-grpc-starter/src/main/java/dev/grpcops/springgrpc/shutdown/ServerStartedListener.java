package dev.grpcops.springgrpc.shutdown;

import dev.grpcops.spring.shutdown.DrainOnContextClose;
import dev.grpcops.spring.shutdown.ServingStatusPublisher;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.context.event.EventListener;
import org.springframework.grpc.server.lifecycle.GrpcServerStartedEvent;

/**
 * Spring gRPC's event for each server it started, told to what follows the server: its health names
 * and warm-up ({@link ServingStatusPublisher}), its drain ({@link DrainOnContextClose}).
 */
final class ServerStartedListener {

    private final ObjectProvider<ServingStatusPublisher> publisher;
    private final ObjectProvider<DrainOnContextClose> drain;

    ServerStartedListener(ObjectProvider<ServingStatusPublisher> publisher, ObjectProvider<DrainOnContextClose> drain) {
        this.publisher = publisher;
        this.drain = drain;
    }

    @EventListener
    void serverStarted(GrpcServerStartedEvent event) {
        publisher.ifAvailable(status -> status.serverStarted(event.getServer(), event.getAddress(), event.getPort()));
        drain.ifAvailable(onClose -> onClose.serverStarted(event.getServer()));
    }
}
