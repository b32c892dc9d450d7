package dev.grpcops.client;

import static org.assertj.core.api.Assertions.assertThat;

import dev.grpcops.internal.PickHint;
import dev.grpcops.proto.chain.v1.CheckRequest;
import dev.grpcops.proto.chain.v1.StockGrpc;
import dev.grpcops.testing.FakeClock;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The default balancing (peak-EWMA under outlier detection, health-checked) over three in-process
 * replicas whose latencies are fake time: which replica answered, counted by each. The balancer's
 * clock and random source are the fixture's, so every count is the same on every run.
 */
@Timeout(60)
class PeakEwmaBalancingTests {

    @RegisterExtension
    final FakeClock clock = new FakeClock();

    private InProcessReplicas replicas;

    private InProcessReplicas start(Map<String, ?> serviceConfig) throws Exception {
        replicas = new InProcessReplicas(clock, 3, serviceConfig, 42);
        return replicas;
    }

    @AfterEach
    void stop() throws InterruptedException {
        if (replicas != null) {
            replicas.close();
        }
    }

    private static Map<String, ?> defaults() {
        return ServiceConfigs.builder()
                .healthCheck(InProcessReplicas.HEALTH_NAME)
                .build();
    }

    @Test
    void healthyReplicasOfTheSameLatencyShareTheCallsEvenly() throws Exception {
        start(defaults());
        List<Integer> shares = replicas.call(300, 3);
        assertThat(shares).as("calls per replica").allMatch(count -> count >= 80 && count <= 120);
    }

    @Test
    void aSlowReplicaStopsGettingCallsWhereRoundRobinKeepsFeedingIt() throws Exception {
        start(defaults());
        replicas.call(30, 3);
        replicas.replica(1).latency(Duration.ofMillis(200));
        List<Integer> first = replicas.call(30, 3);
        assertThat(first.get(1))
                .as("found out within its first few calls: %s", first)
                .isLessThanOrEqualTo(3);
        List<Integer> shares = replicas.call(300, 3);
        assertThat(shares.get(1)).as("calls to the slow replica of %s", shares).isLessThan(15);

        replicas.close();
        start(ServiceConfigs.healthCheckedRoundRobin(InProcessReplicas.HEALTH_NAME));
        replicas.call(30, 3);
        replicas.replica(1).latency(Duration.ofMillis(200));
        assertThat(replicas.call(60, 3).get(1)).as("round_robin: a third").isEqualTo(20);
    }

    @Test
    void aReplicaThatFailsFastDoesNotLookFast() throws Exception {
        start(ServiceConfigs.builder()
                .outlierDetection(null)
                .healthCheck(InProcessReplicas.HEALTH_NAME)
                .build());
        replicas.call(30, 3);
        replicas.replica(2).latency(Duration.ZERO).failWith(Status.UNAVAILABLE);
        List<Integer> shares = replicas.call(300, 3);
        assertThat(shares.get(2))
                .as("calls to the failing replica of %s", shares)
                .isLessThan(15);
    }

    @Test
    void aReplicaThatIsNotServingGetsNoCalls() throws Exception {
        start(defaults());
        replicas.call(30, 3);
        replicas.replica(0).serving(false);
        org.awaitility.Awaitility.await()
                .atMost(Duration.ofSeconds(5))
                .until(() -> replicas.call(30, 3).get(0) == 0);
        assertThat(replicas.call(150, 3).get(0)).isZero();
    }

    @Test
    void anAttemptThatAvoidsAReplicaIsSentElsewhere() throws Exception {
        start(defaults());
        replicas.call(30, 3);
        for (int i = 0; i < 60; i++) {
            PickHint first = PickHint.first();
            var firstCall = StockGrpc.newFutureStub(replicas.channel())
                    .withOption(PickHint.KEY, first)
                    .withDeadlineAfter(10, TimeUnit.SECONDS)
                    .check(CheckRequest.newBuilder().setSku("s").build());
            assertThat(first.picked())
                    .as("the balancer says where it sent the attempt")
                    .isNotNull();
            PickHint second = PickHint.avoiding(first);
            var retry = StockGrpc.newFutureStub(replicas.channel())
                    .withOption(PickHint.KEY, second)
                    .withDeadlineAfter(10, TimeUnit.SECONDS)
                    .check(CheckRequest.newBuilder().setSku("s").build());
            replicas.awaitAll(List.of(firstCall, retry));
            assertThat(second.picked()).as("attempt %d", i).isNotNull().isNotEqualTo(first.picked());
        }
    }

    @Test
    void badPolicyConfigIsRefusedNamingTheField() {
        var parsed = new PeakEwmaLoadBalancerProvider().parseLoadBalancingPolicyConfig(Map.of("decay", "soon"));
        assertThat(parsed.getError()).isNotNull();
        assertThat(parsed.getError().getDescription()).contains("decay must be seconds like");
        assertThat(new PeakEwmaLoadBalancerProvider()
                        .parseLoadBalancingPolicyConfig(Map.of())
                        .getConfig())
                .isNotNull();
    }

    @Test
    void callsFailAsTheReplicasDoWhenNoneIsThere() throws Exception {
        start(defaults());
        replicas.call(3, 3);
        for (int i = 0; i < 3; i++) {
            replicas.replica(i).server.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
        }
        StatusRuntimeException failed = org.assertj.core.api.Assertions.catchThrowableOfType(
                StatusRuntimeException.class,
                () -> StockGrpc.newBlockingStub(replicas.channel())
                        .withDeadlineAfter(5, TimeUnit.SECONDS)
                        .check(CheckRequest.newBuilder().setSku("s").build()));
        assertThat(failed.getStatus().getCode()).isEqualTo(Status.Code.UNAVAILABLE);
    }
}
