package com.example.plaingreeter;

import com.example.plaingreeter.v1.GreetReply;
import com.example.plaingreeter.v1.GreetRequest;
import com.example.plaingreeter.v1.GreeterGrpc;
import com.google.common.util.concurrent.ListenableFuture;
import dev.grpcops.ChannelStack;
import dev.grpcops.client.BalancingListener;
import dev.grpcops.client.ServiceConfigs;
import dev.grpcops.budget.BudgetInterceptors;
import dev.grpcops.budget.BudgetRules;
import dev.grpcops.retry.Hedging;
import dev.grpcops.retry.Retry;
import dev.grpcops.retry.RetryListener;
import dev.grpcops.tracing.GrpcTracing;
import io.grpc.ManagedChannel;
import io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder;
import io.opentelemetry.api.OpenTelemetry;
import java.time.Duration;
import java.util.concurrent.TimeUnit;

/**
 * Greeter replicas behind one channel with every grpcops client feature, through one {@link
 * ChannelStack}: retries marked, budgets handed down, the caller forwarded, a span per attempt, the
 * first calls held until a replica is ready, cancellations within a budget, and peak-EWMA balancing
 * (slow start for a replica that joins, picks within the call's deadline) of health-checked replicas
 * under outlier detection, its decisions told to a {@link BalancingListener}. Each Greet goes through
 * a {@link Retry}: an {@code UNAVAILABLE} answer is tried once more, and a slow one hedged, within
 * the call's budget.
 */
final class GreeterClient implements AutoCloseable {

    private final ManagedChannel channel;
    private final Retry retry;

    /**
     * A client of {@code target}, e.g. {@code list:///10.0.0.1:50071,10.0.0.2:50071}; its spans go to
     * {@code openTelemetry}, its balancer's decisions to {@code balancing}, its retries' and hedges'
     * outcomes to {@code retries} (for metrics).
     */
    GreeterClient(
            String target, OpenTelemetry openTelemetry, BalancingListener balancing, RetryListener retries) {
        ChannelStack stack = ChannelStack.builder()
                .retryAttempts()
                .budget(BudgetInterceptors.builder(BudgetRules.DEFAULTS).build())
                .callerForwarding()
                .tracing(GrpcTracing.builder(openTelemetry).build())
                .readiness(Duration.ofSeconds(5))
                .cancellations()
                .balancingListener(balancing)
                .serviceConfig(ServiceConfigs.builder()
                        .healthCheck("")
                        .slowStart(Duration.ofSeconds(10))
                        .build())
                .build();
        this.channel = stack.channel(NettyChannelBuilder.forTarget(target).usePlaintext());
        this.retry = Retry.builder(BudgetRules.DEFAULTS)
                .hedging(Hedging.DEFAULTS)
                .listener(retries)
                .build();
    }

    /** Greet, retried or hedged on another replica when the budget allows. */
    ListenableFuture<GreetReply> greet(GreetRequest request) {
        return retry.hedged(() -> GreeterGrpc.newFutureStub(channel).greet(request));
    }

    /** The channel, for other stubs. */
    ManagedChannel channel() {
        return channel;
    }

    @Override
    public void close() throws InterruptedException {
        channel.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
    }
}
