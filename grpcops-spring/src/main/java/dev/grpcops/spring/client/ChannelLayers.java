package dev.grpcops.spring.client;

import dev.grpcops.ChannelStack;
import dev.grpcops.client.CancellationBudget;
import dev.grpcops.client.ReadinessGate;
import io.grpc.ManagedChannelBuilder;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import java.time.Duration;
import java.util.Arrays;
import java.util.EnumMap;
import java.util.Locale;
import java.util.Map;
import java.util.stream.Collectors;
import org.springframework.beans.factory.ObjectProvider;

/**
 * What the library puts on each channel's builder, whichever integration makes the channel: the
 * balancing service config ({@link ChannelServiceConfigs}), the direct executor ({@code
 * grpcops.client.direct-executor}), and the layers of {@link ChannelStack} that are one per
 * channel: the readiness gate ({@code grpcops.client.wait-for-ready-window}), the cancellation
 * budget ({@code grpcops.client.cancellations-per-second}, with its counts as metrics) and the
 * balancing decisions as metrics. The gate and the budget follow the channel once it is made,
 * through {@link ChannelFollowers}: the integration's channel factory hands each channel to it.
 */
public final class ChannelLayers {

    private final ClientProperties properties;
    private final ChannelServiceConfigs serviceConfigs;
    private final ChannelFollowers followers;
    private final MeterRegistry meters;
    private final CancellationBudget.CancellationListener cancellationListener;

    public ChannelLayers(
            ClientProperties properties,
            ChannelServiceConfigs serviceConfigs,
            ChannelFollowers followers,
            ObjectProvider<MeterRegistry> registry) {
        int perSecond = properties.getCancellationsPerSecond();
        if (perSecond < 0) {
            throw new IllegalArgumentException(
                    "grpcops.client.cancellations-per-second must be 0 (no budget) or more, got " + perSecond);
        }
        this.properties = properties;
        this.serviceConfigs = serviceConfigs;
        this.followers = followers;
        this.meters = registry.getIfAvailable();
        this.cancellationListener = meters == null ? CancellationBudget.CancellationListener.NONE : countedIn(meters);
    }

    /**
     * The layers of {@link ChannelStack} that are one per channel, on the builder of the channel
     * named {@code name}, in the stack's order: the readiness gate outermost, then the cancellation
     * budget, then the balancing metrics.
     */
    public void perChannelLayers(ManagedChannelBuilder<?> builder, String name) {
        // The builder runs the interceptor added last first: the innermost layer goes on first.
        balancingEvents(builder, name);
        cancellations(builder, name);
        readiness(builder, name);
    }

    /** The channel's default service config: the library's balancing. */
    public void serviceConfig(ManagedChannelBuilder<?> builder, String name) {
        serviceConfigs.accept(builder, name);
    }

    /** Calls run on the transport's threads, when {@code grpcops.client.direct-executor} is on. */
    public void directExecutor(ManagedChannelBuilder<?> builder) {
        if (properties.isDirectExecutor()) {
            builder.directExecutor();
        }
    }

    /** The channel's readiness gate, unless {@code grpcops.client.wait-for-ready-window} is zero. */
    public void readiness(ManagedChannelBuilder<?> builder, String name) {
        Duration window = properties.getWaitForReadyWindow();
        if (!window.isZero() && !window.isNegative()) {
            ReadinessGate gate = new ReadinessGate(window);
            builder.intercept(gate);
            followers.add(name, gate::follow);
        }
    }

    /** The channel's cancellation budget, unless {@code grpcops.client.cancellations-per-second} is 0. */
    public void cancellations(ManagedChannelBuilder<?> builder, String name) {
        int perSecond = properties.getCancellationsPerSecond();
        if (perSecond == 0) {
            return;
        }
        CancellationBudget budget = CancellationBudget.builder()
                .perSecond(perSecond)
                .burst(Math.max(1, perSecond / 2))
                .listener(cancellationListener)
                .build();
        if (meters != null) {
            Gauge.builder("grpc.client.cancellations.waiting", budget, CancellationBudget::waiting)
                    .description("Deferred cancellations not sent yet, of calls still open downstream")
                    .tag("channel", name)
                    .register(meters);
        }
        builder.intercept(budget);
        followers.add(name, budget::follow);
    }

    /** The balancer's decisions besides plain picks, as the channel's metrics (with a meter registry). */
    public void balancingEvents(ManagedChannelBuilder<?> builder, String name) {
        if (meters != null) {
            builder.intercept(new MicrometerBalancingListener(meters, name).interceptor());
        }
    }

    private static CancellationBudget.CancellationListener countedIn(MeterRegistry meters) {
        Map<CancellationBudget.Outcome, Counter> counters = Arrays.stream(CancellationBudget.Outcome.values())
                .collect(Collectors.toMap(
                        outcome -> outcome,
                        outcome -> Counter.builder("grpc.client.cancellations")
                                .description("Calls cancelled before they ended: the cancellation sent downstream at"
                                        + " once, deferred (over the channel's budget), or sent later as the budget"
                                        + " refilled")
                                .tag("outcome", outcome.name().toLowerCase(Locale.ROOT))
                                .register(meters),
                        (a, b) -> a,
                        () -> new EnumMap<>(CancellationBudget.Outcome.class)));
        return outcome -> counters.get(outcome).increment();
    }
}
