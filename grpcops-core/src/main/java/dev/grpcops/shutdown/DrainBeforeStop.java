package dev.grpcops.shutdown;

import io.grpc.Server;
import io.grpc.protobuf.services.HealthStatusManager;
import java.time.Duration;
import java.util.Collection;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Stops gRPC servers without failing a call (design §10):
 * <ol>
 *   <li>every health name becomes {@code NOT_SERVING}, while the servers keep serving, and the
 *       {@code whenDraining} hook runs (admission ends its queued calls {@code UNAVAILABLE});</li>
 *   <li>wait the drain delay, so probes and health-checking clients move traffic away;</li>
 *   <li>stop taking new calls (GOAWAY) and let the calls in flight finish within the grace period;</li>
 *   <li>cancel what is left (long-lived streams such as health Watch, overdue calls).</li>
 * </ol>
 * The last step always runs, also when the wait is interrupted. Each phase is logged with the
 * number of calls in flight.
 */
public final class DrainBeforeStop {

    private static final Logger log = LoggerFactory.getLogger(DrainBeforeStop.class);
    /** How long stopped servers get to release their transports after everything was cancelled. */
    private static final Duration TERMINATION = Duration.ofSeconds(5);

    private final HealthStatusManager health;
    private final InFlightCalls inFlight;
    private final Duration drainDelay;
    private final Duration grace;
    private final Runnable whenDraining;

    private DrainBeforeStop(Builder builder) {
        this.health = builder.health;
        this.inFlight = builder.inFlight;
        this.drainDelay = builder.drainDelay;
        this.grace = builder.grace;
        this.whenDraining = builder.whenDraining;
    }

    /**
     * A drain of the servers whose health names {@code health} holds and whose calls {@code
     * inFlight} counts (an interceptor on each of their services).
     */
    public static Builder builder(HealthStatusManager health, InFlightCalls inFlight) {
        return new Builder(health, inFlight);
    }

    /** A builder with this drain's health, count and settings, to change some. */
    public Builder toBuilder() {
        return builder(health, inFlight).drainDelay(drainDelay).grace(grace).whenDraining(whenDraining);
    }

    /** How long a draining server keeps serving after reporting NOT_SERVING. */
    public Duration drainDelay() {
        return drainDelay;
    }

    /** How long calls in flight get after GOAWAY; negative: as long as they take. */
    public Duration grace() {
        return grace;
    }

    /** Drains and stops every server of {@code servers} that is still running; returns once they have stopped. */
    public void drain(Collection<Server> servers) {
        List<Server> running =
                servers.stream().filter(server -> !server.isShutdown()).toList();
        if (running.isEmpty()) {
            return;
        }
        try {
            health.enterTerminalState();
            whenDraining.run();
            log.info(
                    "drain: health NOT_SERVING on every name; serving {} more for {} calls in flight",
                    drainDelay,
                    inFlight.count());
            if (!drainDelay.isNegative() && !drainDelay.isZero()) {
                Thread.sleep(drainDelay.toMillis());
            }
            log.info(
                    "drain: no new calls (GOAWAY); {} calls in flight get up to {} to finish", inFlight.count(), grace);
            running.forEach(Server::shutdown);
            inFlight.awaitNone(grace);
        } catch (InterruptedException e) {
            log.warn("drain: interrupted; stopping now with {} calls in flight", inFlight.count());
            Thread.currentThread().interrupt();
        } finally {
            stop(running);
        }
    }

    private void stop(List<Server> running) {
        int unfinished = inFlight.count();
        running.forEach(Server::shutdownNow);
        // Interrupted or not, the servers get their moment to close transports.
        boolean interrupted = Thread.interrupted();
        try {
            long deadline = System.nanoTime() + TERMINATION.toNanos();
            for (Server server : running) {
                server.awaitTermination(Math.max(0, deadline - System.nanoTime()), TimeUnit.NANOSECONDS);
            }
        } catch (InterruptedException e) {
            interrupted = true;
        } finally {
            if (interrupted) {
                Thread.currentThread().interrupt();
            }
        }
        if (unfinished > 0) {
            log.warn("drain: stopped; {} calls still in flight were cancelled", unfinished);
        } else {
            log.info("drain: stopped; every call in flight finished");
        }
    }

    /** Each setting has its default, said by its setter. */
    public static final class Builder {

        private final HealthStatusManager health;
        private final InFlightCalls inFlight;
        private Duration drainDelay = Duration.ofSeconds(5);
        private Duration grace = Duration.ofSeconds(20);
        private Runnable whenDraining = () -> {};

        private Builder(HealthStatusManager health, InFlightCalls inFlight) {
            this.health = Objects.requireNonNull(health, "health");
            this.inFlight = Objects.requireNonNull(inFlight, "inFlight");
        }

        /** How long to keep serving after reporting NOT_SERVING; zero for no wait; 5 s by default. */
        public Builder drainDelay(Duration drainDelay) {
            if (Objects.requireNonNull(drainDelay, "drainDelay").isNegative()) {
                throw new IllegalArgumentException("drainDelay must not be negative, got " + drainDelay);
            }
            this.drainDelay = drainDelay;
            return this;
        }

        /** How long calls in flight get after GOAWAY; negative waits as long as they take; 20 s by default. */
        public Builder grace(Duration grace) {
            this.grace = Objects.requireNonNull(grace, "grace");
            return this;
        }

        /**
         * Runs once the health names say NOT_SERVING, e.g. so that calls waiting for admission go
         * to another replica instead of waiting out the drain.
         */
        public Builder whenDraining(Runnable whenDraining) {
            this.whenDraining = Objects.requireNonNull(whenDraining, "whenDraining");
            return this;
        }

        public DrainBeforeStop build() {
            return new DrainBeforeStop(this);
        }
    }
}
