package com.example.plaingreeter;

import dev.grpcops.ChannelStack;
import dev.grpcops.client.CancellationBudget;
import dev.grpcops.client.ServiceConfigs;
import dev.grpcops.deadline.BudgetInterceptors;
import dev.grpcops.deadline.BudgetRules;
import io.grpc.ManagedChannel;
import io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder;
import java.time.Duration;

/**
 * A channel to Greeter replicas with every grpcops client feature, through one {@link
 * ChannelStack}: budgets handed down, the caller forwarded, retries marked, the first calls held
 * until a replica is ready, cancellations within a budget, and peak-EWMA balancing of health-checked
 * replicas under outlier detection.
 */
final class GreeterClient {

    private static final ChannelStack STACK = ChannelStack.builder()
            .retryAttempts()
            .budget(BudgetInterceptors.builder(BudgetRules.DEFAULTS).build())
            .callerForwarding()
            .readiness(Duration.ofSeconds(5))
            .cancellations(CancellationBudget::builder)
            .serviceConfig(ServiceConfigs.builder().healthCheck("").build())
            .build();

    private GreeterClient() {}

    /** A channel to {@code target}, e.g. {@code list:///10.0.0.1:50071,10.0.0.2:50071}. */
    static ManagedChannel channel(String target) {
        return STACK.channel(NettyChannelBuilder.forTarget(target).usePlaintext());
    }
}
