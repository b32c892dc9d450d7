package dev.grpcops.spring.client;

import dev.grpcops.client.BalancingListener;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import java.util.EnumMap;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * One channel's balancing decisions as counters tagged with the channel (the net.devh client
 * name): {@code grpc.client.picks.passed.over{reason}}, {@code grpc.client.probes}, {@code
 * grpc.client.slow.starts}, {@code grpc.client.ejections} and the gauge {@code
 * grpc.client.ejected.replicas}. Registered when the channel is made, so that each series is there
 * (at 0) before anything happens. The balancer reports ejections with the channel's next call, so
 * the gauge is as of the channel's last call.
 */
public final class MicrometerBalancingListener implements BalancingListener {

    private final Map<PassedOver, Counter> passedOver = new EnumMap<>(PassedOver.class);
    private final Counter probes;
    private final Counter slowStarts;
    private final Counter ejections;
    private final AtomicInteger ejected = new AtomicInteger();

    public MicrometerBalancingListener(MeterRegistry registry, String channel) {
        for (PassedOver reason : PassedOver.values()) {
            passedOver.put(
                    reason,
                    Counter.builder("grpc.client.picks.passed.over")
                            .description("Picks that took another replica than the two draws chose: for its latency"
                                    + " (every replica compared) or for the call's deadline")
                            .tag("channel", channel)
                            .tag("reason", reason.name().toLowerCase(Locale.ROOT))
                            .register(registry));
        }
        this.probes = Counter.builder("grpc.client.probes")
                .description("Calls sent to a replica passed over for its latency, to measure it again")
                .tag("channel", channel)
                .register(registry);
        this.slowStarts = Counter.builder("grpc.client.slow.starts")
                .description("Replicas that joined ready peers and began their slow start")
                .tag("channel", channel)
                .register(registry);
        this.ejections = Counter.builder("grpc.client.ejections")
                .description("Replicas outlier detection took out of the pick")
                .tag("channel", channel)
                .register(registry);
        Gauge.builder("grpc.client.ejected.replicas", ejected, AtomicInteger::get)
                .description("Replicas out of the pick for outlier detection, as of the channel's last call")
                .tag("channel", channel)
                .register(registry);
    }

    @Override
    public void passedOver(PassedOver reason) {
        passedOver.get(reason).increment();
    }

    @Override
    public void probed() {
        probes.increment();
    }

    @Override
    public void slowStartBegan() {
        slowStarts.increment();
    }

    @Override
    public void ejected() {
        ejections.increment();
        ejected.incrementAndGet();
    }

    @Override
    public void returned() {
        ejected.updateAndGet(n -> Math.max(0, n - 1));
    }
}
