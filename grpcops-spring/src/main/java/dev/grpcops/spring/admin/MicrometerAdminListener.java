package dev.grpcops.spring.admin;

import dev.grpcops.admin.AdminListener;
import io.grpc.Status;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/** Admin calls as {@code grpcops_admin_calls_total{method,outcome}}; each counter built once. */
final class MicrometerAdminListener implements AdminListener {

    private final MeterRegistry registry;
    private final Map<String, Map<Status.Code, Counter>> counters = new ConcurrentHashMap<>();

    MicrometerAdminListener(MeterRegistry registry) {
        this.registry = registry;
    }

    @Override
    public void completed(String method, Status.Code outcome) {
        counters.computeIfAbsent(method, m -> new ConcurrentHashMap<>())
                .computeIfAbsent(
                        outcome,
                        code -> Counter.builder("grpcops.admin.calls")
                                .description(
                                        "Admin calls, by method and outcome (OK or the status code that ended them)")
                                .tag("method", method)
                                .tag("outcome", code.name())
                                .register(registry))
                .increment();
    }
}
