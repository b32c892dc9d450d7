package dev.grpcops.spring.shutdown;

import dev.grpcops.InfrastructureServices;
import dev.grpcops.spring.warmup.WarmUpBeforeServing;
import io.grpc.Server;
import io.grpc.ServerServiceDefinition;
import io.grpc.health.v1.HealthCheckResponse.ServingStatus;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.beans.factory.ObjectProvider;

/**
 * Once the server listens, reports every service it serves under its own name in the standard
 * health service, {@code NOT_SERVING} until its warm-up ({@code grpcops.warmup}) is over and
 * {@code SERVING} then ({@link ServiceReadiness}), beside {@code ""} (the process, serving from the
 * start: liveness holds during the warm-up). Kubernetes readiness
 * probes and client-side health checking ask for these names; liveness asks for {@code ""}. With a
 * meter registry, {@code grpc_health_serving{service}} shows each name's status (1 SERVING, 0 not),
 * read from the health service when scraped: a drained or draining replica shows 0. Each starter
 * tells it of every server that started ({@link #serverStarted}).
 */
public final class ServingStatusPublisher {

    private static final Logger log = LoggerFactory.getLogger(ServingStatusPublisher.class);

    private final ServiceReadiness readiness;
    private final ObjectProvider<MeterRegistry> registry;
    /** Null: no warm-up, SERVING once the server listens. */
    private final WarmUpBeforeServing warmUp;

    private volatile List<String> published = List.of();

    public ServingStatusPublisher(
            ServiceReadiness readiness, ObjectProvider<MeterRegistry> registry, WarmUpBeforeServing warmUp) {
        this.readiness = readiness;
        this.registry = registry;
        this.warmUp = warmUp;
    }

    /**
     * {@code server} started, listening on {@code address} ({@code *} or a wildcard for every
     * interface) and {@code port}: its services are known to health from now on, and SERVING once
     * its warm-up is over.
     */
    public void serverStarted(Server server, String address, int port) {
        List<String> published = server.getServices().stream()
                .map(ServerServiceDefinition::getServiceDescriptor)
                .map(descriptor -> descriptor.getName())
                .filter(name -> !InfrastructureServices.NAMES.contains(name))
                .toList();
        this.published = published;
        // Known from now on: a readiness probe or a client asking during the warm-up hears
        // NOT_SERVING ("not yet"), not NOT_FOUND ("no such service"), and a drain reaches watchers.
        readiness.starting(published);
        Runnable serving = () -> {
            // After a drain began, the health service is terminal and ignores this.
            readiness.warmedUp(published);
            log.info("health: SERVING for \"\" and {}", published);
        };
        if (warmUp == null) {
            serving.run();
        } else {
            warmUp.warmUpThen(server, address, port, serving);
        }
        registry.ifAvailable(meters -> {
            for (String name : Stream.concat(Stream.of(""), published.stream()).toList()) {
                Gauge.builder("grpc.health.serving", () -> serving(name) ? 1 : 0)
                        .description("Whether the health service says SERVING for this name (1) or not (0)")
                        .tag("service", name)
                        .register(meters);
            }
        });
    }

    /** The names reported SERVING when the server started, beside {@code ""}; empty before. */
    public List<String> published() {
        return published;
    }

    /** Each name reported when the server started ({@code ""} left out) and whether it is SERVING now. */
    public Map<String, Boolean> servingByName() {
        Map<String, Boolean> serving = new LinkedHashMap<>();
        for (String name : published) {
            serving.put(name, serving(name));
        }
        return serving;
    }

    /**
     * Whether the server listens and health answers SERVING for {@code ""} and every name it
     * serves: what a readiness check asks (false before the warm-up ends and from a drain on).
     */
    public boolean allServing() {
        return !published.isEmpty()
                && serving("")
                && servingByName().values().stream().allMatch(Boolean::booleanValue);
    }

    /** Whether a health Check of {@code name} answers SERVING now, asked of the health service in process. */
    public boolean serving(String name) {
        return readiness.reported(name) == ServingStatus.SERVING;
    }
}
