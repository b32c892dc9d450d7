package dev.grpcops.autoconfigure.shutdown;

import dev.grpcops.shutdown.DrainBeforeStop;
import io.grpc.Server;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import net.devh.boot.grpc.server.event.GrpcServerStartedEvent;
import org.springframework.context.ApplicationContext;
import org.springframework.context.event.ContextClosedEvent;
import org.springframework.context.event.EventListener;

/**
 * Runs {@link DrainBeforeStop} on every gRPC server the application started (net.devh starts one
 * per server factory: Netty, in-process) when its context closes (SIGTERM), before net.devh's own
 * lifecycle stops them the abrupt way.
 */
final class DrainOnContextClose {

    private final ApplicationContext context;
    private final DrainBeforeStop drain;
    private final List<Server> servers = new CopyOnWriteArrayList<>();

    DrainOnContextClose(ApplicationContext context, DrainBeforeStop drain) {
        this.context = context;
        this.drain = drain;
    }

    @EventListener
    void serverStarted(GrpcServerStartedEvent event) {
        servers.add(event.getServer());
    }

    @EventListener
    void contextClosing(ContextClosedEvent event) {
        // Child contexts (the management server's) publish their own close events.
        if (event.getApplicationContext() == context) {
            drain.drain(servers);
        }
    }
}
