package dev.grpcops.spring.kubernetes;

import dev.grpcops.kubernetes.ResolverListener;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * {@code grpc_resolver_endpoints{target}} (ready endpoints the channel has) and
 * {@code grpc_resolver_watch_errors_total{target}} (failed list/watch attempts). Targets come from
 * configuration, so the tag is bounded; a closed channel's gauge is removed.
 */
final class MicrometerResolverListener implements ResolverListener {

    private final MeterRegistry registry;
    private final Map<String, AtomicInteger> endpoints = new ConcurrentHashMap<>();
    private final Map<String, Gauge> gauges = new ConcurrentHashMap<>();

    MicrometerResolverListener(MeterRegistry registry) {
        this.registry = registry;
    }

    @Override
    public void endpoints(String target, int ready) {
        endpoints
                .computeIfAbsent(target, t -> {
                    AtomicInteger value = new AtomicInteger();
                    gauges.put(
                            t,
                            Gauge.builder("grpc.resolver.endpoints", value, AtomicInteger::get)
                                    .description("Ready endpoints the kubernetes:/// resolver has handed the channel")
                                    .tag("target", t)
                                    .register(registry));
                    return value;
                })
                .set(ready);
    }

    @Override
    public void watchError(String target, Throwable cause) {
        Counter.builder("grpc.resolver.watch.errors")
                .description("Failed list or watch requests of the kubernetes:/// resolver to the API server")
                .tag("target", target)
                .register(registry)
                .increment();
    }

    @Override
    public void closed(String target) {
        endpoints.remove(target);
        Gauge gauge = gauges.remove(target);
        if (gauge != null) {
            registry.remove(gauge);
        }
    }
}
