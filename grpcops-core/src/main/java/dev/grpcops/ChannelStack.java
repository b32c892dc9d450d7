package dev.grpcops;

import dev.grpcops.admission.AdmissionInterceptors;
import dev.grpcops.budget.BudgetInterceptors;
import dev.grpcops.client.BalancingListener;
import dev.grpcops.client.CancellationBudget;
import dev.grpcops.client.ReadinessGate;
import dev.grpcops.client.ServiceConfigs;
import dev.grpcops.retry.Retry;
import dev.grpcops.tracing.GrpcTracing;
import io.grpc.ClientInterceptor;
import io.grpc.ManagedChannel;
import io.grpc.ManagedChannelBuilder;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;

/**
 * The library's client features as one stack for every channel a service makes, applied in the one
 * order they work in ({@link Layer}), each optional, with the channel's default service config
 * (balancing, outlier detection, health checking) and keepalive: the entry for plain grpc-java. The
 * Spring Boot starter places its interceptors in the same order.
 *
 * <pre>{@code
 * ChannelStack stack = ChannelStack.builder()
 *         .retryAttempts()
 *         .budget(budget)
 *         .callerForwarding()
 *         .readiness(Duration.ofSeconds(5))
 *         .cancellations()
 *         .serviceConfig(ServiceConfigs.builder().healthCheck("chain.v1.Stock").build())
 *         .build();
 * ManagedChannel stock = stack.channel(NettyChannelBuilder.forTarget("list:///10.0.0.1:50061,10.0.0.2:50061").usePlaintext());
 * }</pre>
 */
public final class ChannelStack {

    /** The layers, outermost first: a call meets them in this order on its way to the wire. */
    public enum Layer {
        /** Names the target of each attempt and marks extra attempts ({@link Retry}). */
        RETRY_ATTEMPTS,
        /** Hands each downstream call the remaining budget less the reserve, or does not send it. */
        BUDGET,
        /** Forwards the served call's caller and criticality. */
        CALLER_FORWARDING,
        /** Each attempt's span, with the deadline handed down and its number. */
        TRACE_ATTEMPT,
        /** Lets calls made before the channel's first replica is ready wait for one, for a while. */
        READINESS,
        /** Sends cancellations within the connection's budget, the rest as it refills. */
        CANCELLATIONS,
        /** Tells the channel's balancer whom to report its decisions to ({@link BalancingListener}). */
        BALANCING_EVENTS
    }

    private final Map<Layer, Supplier<? extends ClientInterceptor>> layers;
    private final Map<String, ?> serviceConfig;
    private final Duration keepAliveTime;
    private final Duration keepAliveTimeout;

    private ChannelStack(Builder builder) {
        this.layers = Collections.unmodifiableMap(new EnumMap<>(builder.layers));
        this.serviceConfig = builder.serviceConfig;
        this.keepAliveTime = builder.keepAliveTime;
        this.keepAliveTimeout = builder.keepAliveTimeout;
    }

    public static Builder builder() {
        return new Builder();
    }

    /** The layers this stack has, outermost first. */
    public Set<Layer> layers() {
        return layers.keySet();
    }

    /**
     * {@code builder}'s channel behind every layer of this stack, with the stack's service config
     * as its default; each channel gets its own readiness gate and cancellation budget. The stack's
     * interceptors are added to {@code builder} and run before any it has already: one builder per
     * channel.
     */
    public ManagedChannel channel(ManagedChannelBuilder<?> builder) {
        List<ClientInterceptor> innermostFirst = new ArrayList<>(layers.size());
        layers.values().forEach(layer -> innermostFirst.add(layer.get()));
        // ManagedChannelBuilder runs the interceptor added last first.
        Collections.reverse(innermostFirst);
        builder.intercept(innermostFirst);
        if (serviceConfig != null) {
            builder.defaultServiceConfig(serviceConfig);
        }
        if (keepAliveTime != null) {
            try {
                builder.keepAliveTime(keepAliveTime.toNanos(), TimeUnit.NANOSECONDS)
                        .keepAliveTimeout(keepAliveTimeout.toNanos(), TimeUnit.NANOSECONDS)
                        .keepAliveWithoutCalls(true);
            } catch (UnsupportedOperationException transportWithoutKeepAlive) {
                // A transport without connections to keep alive (or that cannot ping): nothing to do.
            }
        }
        ManagedChannel channel = builder.build();
        for (ClientInterceptor interceptor : innermostFirst) {
            if (interceptor instanceof ReadinessGate gate) {
                gate.follow(channel);
            } else if (interceptor instanceof CancellationBudget budget) {
                budget.follow(channel);
            }
        }
        return channel;
    }

    /** Each feature is left out unless given. */
    public static final class Builder {

        private final EnumMap<Layer, Supplier<? extends ClientInterceptor>> layers = new EnumMap<>(Layer.class);
        private Map<String, ?> serviceConfig;
        private Duration keepAliveTime = Duration.ofSeconds(10);
        private Duration keepAliveTimeout = Duration.ofSeconds(5);

        private Builder() {}

        /**
         * Keepalive on every channel: a ping after {@code time} without a read (also without
         * calls), the connection closed when it is not answered within {@code timeout}, so that a
         * peer whose node died or is cut off (no FIN, no RST) is found out in seconds, not the
         * quarter of an hour TCP takes. On by default, 10 s and 5 s (10 s is the least grpc-java
         * takes). The servers must permit it: {@code NettyServerBuilder.permitKeepAliveTime(5, SECONDS)}
         * and {@code permitKeepAliveWithoutCalls(true)}, or they answer {@code GOAWAY too_many_pings}.
         */
        public Builder keepAlive(Duration time, Duration timeout) {
            if (time.isNegative() || time.isZero() || timeout.isNegative() || timeout.isZero()) {
                throw new IllegalArgumentException(
                        "keepalive time and timeout must be positive, got " + time + " and " + timeout);
            }
            this.keepAliveTime = time;
            this.keepAliveTimeout = timeout;
            return this;
        }

        /** No keepalive: the channels keep gRPC's default (none). */
        public Builder withoutKeepAlive() {
            this.keepAliveTime = null;
            return this;
        }

        /** Names each attempt's target and marks retries and hedges, for {@link Retry}'s calls. */
        public Builder retryAttempts() {
            ClientInterceptor attempts = Retry.clientInterceptor();
            return layer(Layer.RETRY_ATTEMPTS, () -> attempts);
        }

        /** Each downstream call gets the served call's remaining budget less the reserve. */
        public Builder budget(BudgetInterceptors budget) {
            ClientInterceptor client = budget.client();
            return layer(Layer.BUDGET, () -> client);
        }

        /** The served call's caller and criticality go along with each downstream call. */
        public Builder callerForwarding() {
            ClientInterceptor forwarding = AdmissionInterceptors.callerForwarding();
            return layer(Layer.CALLER_FORWARDING, () -> forwarding);
        }

        /** A span per attempt, and the trace context sent downstream. */
        public Builder tracing(GrpcTracing tracing) {
            ClientInterceptor attempts = tracing.attempts();
            return layer(Layer.TRACE_ATTEMPT, () -> attempts);
        }

        /**
         * Calls made within {@code window} of the channel's making, before any replica is ready,
         * wait for one instead of failing {@code UNAVAILABLE} (see {@link ReadinessGate}).
         */
        public Builder readiness(Duration window) {
            if (window.isNegative() || window.isZero()) {
                throw new IllegalArgumentException("readiness window must be positive, was " + window);
            }
            return layer(Layer.READINESS, () -> new ReadinessGate(window));
        }

        /**
         * Cancellations within a budget per channel, so that one caller's cancellations cannot make
         * the server close the shared connection: the default budget for each channel.
         */
        public Builder cancellations() {
            return cancellations(() -> CancellationBudget.builder().build());
        }

        /**
         * Cancellations within a budget per channel, each channel's made by {@code perChannel}
         * (a budget counts and defers one channel's cancellations, so each channel needs its own):
         * {@code () -> CancellationBudget.builder().perSecond(200).build()}.
         */
        public Builder cancellations(Supplier<CancellationBudget> perChannel) {
            return layer(Layer.CANCELLATIONS, Objects.requireNonNull(perChannel, "perChannel"));
        }

        /**
         * The latency-aware balancer's decisions besides plain picks (replicas passed over, probes,
         * slow starts) reported to {@code listener}, for metrics: one listener for every channel of
         * the stack (a stack per channel, or {@link BalancingListener#interceptor()} on each
         * channel's builder, to count them apart).
         */
        public Builder balancingListener(BalancingListener listener) {
            ClientInterceptor events = listener.interceptor();
            return layer(Layer.BALANCING_EVENTS, () -> events);
        }

        /** The channels' default service config ({@link ServiceConfigs}); grpc-java's own if not given. */
        public Builder serviceConfig(Map<String, ?> serviceConfig) {
            this.serviceConfig = Objects.requireNonNull(serviceConfig, "serviceConfig");
            return this;
        }

        public ChannelStack build() {
            return new ChannelStack(this);
        }

        private Builder layer(Layer layer, Supplier<? extends ClientInterceptor> interceptor) {
            layers.put(layer, Objects.requireNonNull(interceptor, layer.name()));
            return this;
        }
    }
}
