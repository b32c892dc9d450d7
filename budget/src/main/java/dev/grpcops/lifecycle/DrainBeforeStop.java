package dev.grpcops.lifecycle;

import io.grpc.Server;
import io.grpc.protobuf.services.HealthStatusManager;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import net.devh.boot.grpc.server.event.GrpcServerStartedEvent;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.context.ApplicationContext;
import org.springframework.context.event.ContextClosedEvent;
import org.springframework.context.event.EventListener;

/**
 * Stops the gRPC server without failing a call (SPEC §10). On SIGTERM (context close), before
 * anything else stops:
 * <ol>
 *   <li>every health name becomes {@code NOT_SERVING}, while the server keeps serving;</li>
 *   <li>wait the drain delay, so probes and health-checking clients move traffic away;</li>
 *   <li>stop taking new calls (GOAWAY) and let the calls in flight finish within the grace period;</li>
 *   <li>cancel what is left (long-lived streams such as health Watch, overdue calls).</li>
 * </ol>
 * Each phase is logged with the number of calls in flight.
 */
public final class DrainBeforeStop {

    private static final Logger log = LoggerFactory.getLogger(DrainBeforeStop.class);

    private final ApplicationContext context;
    private final HealthStatusManager health;
    private final InFlightCalls inFlight;
    private final Duration drainDelay;
    private final Duration grace;
    private volatile Server server;

    public DrainBeforeStop(ApplicationContext context, HealthStatusManager health, InFlightCalls inFlight,
            Duration drainDelay, Duration grace) {
        this.context = context;
        this.health = health;
        this.inFlight = inFlight;
        this.drainDelay = drainDelay;
        this.grace = grace;
    }

    @EventListener
    public void serverStarted(GrpcServerStartedEvent event) {
        server = event.getServer();
    }

    @EventListener
    public void contextClosing(ContextClosedEvent event) throws InterruptedException {
        Server running = server;
        // Child contexts (the management server's) publish their own close events.
        if (event.getApplicationContext() != context || running == null || running.isShutdown()) {
            return;
        }
        health.enterTerminalState();
        log.info("drain: health NOT_SERVING on every name; serving {} more for {} calls in flight",
                drainDelay, inFlight.count());
        sleep(drainDelay);

        log.info("drain: no new calls (GOAWAY); {} calls in flight get up to {} to finish", inFlight.count(), grace);
        running.shutdown();
        // A negative grace, as in net.devh, waits as long as it takes.
        long deadline = grace.isNegative() ? Long.MAX_VALUE : System.nanoTime() + grace.toNanos();
        while (inFlight.count() > 0 && System.nanoTime() - deadline < 0) {
            Thread.sleep(20);
        }
        int unfinished = inFlight.count();
        running.shutdownNow();
        running.awaitTermination(5, TimeUnit.SECONDS);
        if (unfinished > 0) {
            log.warn("drain: stopped; {} calls still in flight after {} were cancelled", unfinished, grace);
        } else {
            log.info("drain: stopped; every call in flight finished");
        }
    }

    private static void sleep(Duration duration) throws InterruptedException {
        if (!duration.isZero() && !duration.isNegative()) {
            Thread.sleep(duration.toMillis());
        }
    }
}
