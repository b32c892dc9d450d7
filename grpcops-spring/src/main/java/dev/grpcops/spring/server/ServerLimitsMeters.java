package dev.grpcops.spring.server;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import org.springframework.beans.factory.ObjectProvider;

/**
 * The counters of the server limits: {@code grpc_server_unknown_method_calls_total} (never tagged by
 * name) and {@code grpc_server_malformed_requests_total{method}}, built on first use in the
 * application's meter registry; without one nothing is counted.
 */
public final class ServerLimitsMeters {

    private final ObjectProvider<MeterRegistry> registry;
    private final Map<String, Counter> malformed = new ConcurrentHashMap<>();
    private volatile Counter unknown;

    ServerLimitsMeters(ObjectProvider<MeterRegistry> registry) {
        this.registry = registry;
    }

    public void unknownMethod() {
        Counter counter = unknown;
        if (counter == null) {
            MeterRegistry meters = registry.getIfAvailable();
            if (meters == null) {
                return;
            }
            counter = Counter.builder("grpc.server.unknown.method.calls")
                    .description(
                            "Calls to methods this server does not serve, answered UNIMPLEMENTED (never tagged by name)")
                    .register(meters);
            unknown = counter;
        }
        counter.increment();
    }

    /** {@code method} is a served method's name: bounded by what the server serves. */
    public void malformed(String method) {
        Counter counter = malformed.get(method);
        if (counter == null) {
            MeterRegistry meters = registry.getIfAvailable();
            if (meters == null) {
                return;
            }
            counter = malformed.computeIfAbsent(
                    method,
                    m -> Counter.builder("grpc.server.malformed.requests")
                            .description("Requests that did not parse as their message type, answered INVALID_ARGUMENT")
                            .tag("method", m)
                            .register(meters));
        }
        counter.increment();
    }
}
