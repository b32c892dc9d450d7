package dev.grpcops.spring.shutdown;

import dev.grpcops.shutdown.DrainBeforeStop;
import io.grpc.Server;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import org.springframework.context.ApplicationContext;
import org.springframework.context.event.ContextClosedEvent;
import org.springframework.context.event.EventListener;

/**
 * Runs {@link DrainBeforeStop} on every gRPC server the application started (one per server
 * factory: Netty, in-process) when its context closes (SIGTERM), before the integration's own
 * lifecycle stops them the abrupt way: a context publishes its close event before it stops its
 * lifecycle beans. Each starter tells it of every server that started ({@link #serverStarted}).
 */
public final class DrainOnContextClose {

    private final ApplicationContext context;
    private final DrainBeforeStop drain;
    private final List<Server> servers = new CopyOnWriteArrayList<>();

    public DrainOnContextClose(ApplicationContext context, DrainBeforeStop drain) {
        this.context = context;
        this.drain = drain;
    }

    /** {@code server} started: it is drained when the context closes. */
    public void serverStarted(Server server) {
        servers.add(server);
    }

    @EventListener
    void contextClosing(ContextClosedEvent event) {
        // Child contexts (the management server's) publish their own close events.
        if (event.getApplicationContext() == context) {
            drain.drain(servers);
        }
    }
}
