package dev.grpcops.client;

import static org.assertj.core.api.Assertions.assertThat;

import com.google.common.util.concurrent.ListenableFuture;
import dev.grpcops.internal.PickHint;
import dev.grpcops.proto.chain.v1.CheckReply;
import dev.grpcops.proto.chain.v1.CheckRequest;
import dev.grpcops.proto.chain.v1.StockGrpc;
import io.grpc.ManagedChannel;
import io.grpc.ManagedChannelBuilder;
import io.grpc.Server;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.health.v1.HealthCheckResponse.ServingStatus;
import io.grpc.netty.shaded.io.grpc.netty.NettyServerBuilder;
import io.grpc.protobuf.services.HealthStatusManager;
import io.grpc.stub.StreamObserver;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.Collectors;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Three replicas on loopback behind {@code list:///}, one channel with the default balancing
 * (peak-EWMA under outlier detection), health-checked: which replica answered, counted by each.
 */
@Timeout(60)
class PeakEwmaBalancingTests {

    private final List<Replica> replicas = new ArrayList<>();
    private final ScheduledExecutorService timer = Executors.newSingleThreadScheduledExecutor();
    private ManagedChannel channel;

    /** One Stock replica: answers after {@code delayMs}, or fails UNAVAILABLE when {@code failing}. */
    private final class Replica extends StockGrpc.StockImplBase {
        final AtomicInteger calls = new AtomicInteger();
        final HealthStatusManager health = new HealthStatusManager();
        volatile long delayMs;
        volatile boolean failing;
        Server server;

        @Override
        public void check(CheckRequest request, StreamObserver<CheckReply> responses) {
            calls.incrementAndGet();
            if (failing) {
                responses.onError(Status.UNAVAILABLE.withDescription("failing").asRuntimeException());
                return;
            }
            Runnable answer = () -> {
                responses.onNext(
                        CheckReply.newBuilder().setSku(request.getSku()).build());
                responses.onCompleted();
            };
            if (delayMs == 0) {
                answer.run();
            } else {
                timer.schedule(answer, delayMs, TimeUnit.MILLISECONDS);
            }
        }
    }

    private void start(Map<String, ?> serviceConfig) throws Exception {
        StringBuilder target = new StringBuilder("list:///");
        for (int i = 0; i < 3; i++) {
            Replica replica = new Replica();
            replica.server = NettyServerBuilder.forAddress(new InetSocketAddress("127.0.0.1", 0))
                    .addService(replica)
                    .addService(replica.health.getHealthService())
                    .build()
                    .start();
            replica.health.setStatus("chain.v1.Stock", ServingStatus.SERVING);
            replicas.add(replica);
            target.append(i == 0 ? "" : ",").append("127.0.0.1:").append(replica.server.getPort());
        }
        channel = ManagedChannelBuilder.forTarget(target.toString())
                .usePlaintext()
                .defaultServiceConfig(serviceConfig)
                .build();
    }

    /** round_robin's shares are only a third each once every subchannel is READY. */
    private void awaitEveryReplicaAnswers() {
        org.awaitility.Awaitility.await()
                .atMost(Duration.ofSeconds(10))
                .until(() -> call(30, 3).stream().allMatch(count -> count > 0));
    }

    @AfterEach
    void stop() throws InterruptedException {
        if (channel != null) {
            channel.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
        }
        for (Replica replica : replicas) {
            replica.server.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
        }
        timer.shutdownNow();
    }

    /** {@code n} calls, {@code concurrency} at a time; returns each replica's share of them. */
    private List<Integer> call(int n, int concurrency) throws Exception {
        replicas.forEach(replica -> replica.calls.set(0));
        for (int done = 0; done < n; done += concurrency) {
            List<ListenableFuture<CheckReply>> batch = new ArrayList<>();
            for (int i = 0; i < concurrency; i++) {
                batch.add(StockGrpc.newFutureStub(channel)
                        .withDeadlineAfter(10, TimeUnit.SECONDS)
                        .check(CheckRequest.newBuilder().setSku("s").build()));
            }
            for (ListenableFuture<CheckReply> call : batch) {
                try {
                    call.get(10, TimeUnit.SECONDS);
                } catch (java.util.concurrent.ExecutionException e) {
                    // a failing replica's answer: counted by the replica, not here
                }
            }
        }
        return replicas.stream().map(replica -> replica.calls.get()).collect(Collectors.toList());
    }

    private static Map<String, ?> defaults() {
        return ServiceConfigs.builder().healthCheck("chain.v1.Stock").build();
    }

    @Test
    void healthyReplicasAllGetCalls() throws Exception {
        start(defaults());
        List<Integer> shares = call(300, 3);
        assertThat(shares).as("calls per replica").allMatch(count -> count >= 30);
    }

    @Test
    void aSlowReplicaStopsGettingCallsWhereRoundRobinKeepsFeedingIt() throws Exception {
        start(defaults());
        replicas.get(1).delayMs = 200;
        // found out once its 200 ms outweighs what the others' first (cold) calls left in their averages
        org.awaitility.Awaitility.await()
                .atMost(Duration.ofSeconds(20))
                .until(() -> call(30, 3).get(1) <= 1);
        List<Integer> shares = call(300, 3);
        assertThat(shares.get(1)).as("calls to the slow replica of %s", shares).isLessThan(15);

        channel.shutdownNow();
        channel = null;
        stop();
        replicas.clear();
        start(ServiceConfigs.healthCheckedRoundRobin("chain.v1.Stock"));
        awaitEveryReplicaAnswers();
        replicas.get(1).delayMs = 200;
        assertThat(call(60, 3).get(1)).as("round_robin: a third").isBetween(15, 25);
    }

    @Test
    void aReplicaThatFailsFastDoesNotLookFast() throws Exception {
        start(ServiceConfigs.builder()
                .outlierDetection(null)
                .healthCheck("chain.v1.Stock")
                .build());
        replicas.get(2).failing = true;
        call(30, 3);
        List<Integer> shares = call(300, 3);
        assertThat(shares.get(2))
                .as("calls to the failing replica of %s", shares)
                .isLessThan(15);
    }

    @Test
    void aReplicaThatIsNotServingGetsNoCalls() throws Exception {
        start(defaults());
        call(30, 3);
        replicas.get(0).health.setStatus("chain.v1.Stock", ServingStatus.NOT_SERVING);
        org.awaitility.Awaitility.await()
                .atMost(Duration.ofSeconds(5))
                .until(() -> call(30, 3).get(0) == 0);
        assertThat(call(150, 3).get(0)).isZero();
    }

    @Test
    void anAttemptThatAvoidsAReplicaIsSentElsewhere() throws Exception {
        start(defaults());
        call(30, 3);
        replicas.forEach(replica -> replica.calls.set(0));
        PickHint first = PickHint.first();
        StockGrpc.newBlockingStub(channel)
                .withOption(PickHint.KEY, first)
                .withDeadlineAfter(10, TimeUnit.SECONDS)
                .check(CheckRequest.newBuilder().setSku("s").build());
        int picked = -1;
        for (int i = 0; i < 3; i++) {
            if (replicas.get(i).calls.get() == 1) {
                picked = i;
            }
        }
        assertThat(first.picked())
                .as("the balancer says where it sent the attempt")
                .isNotNull();

        replicas.forEach(replica -> replica.calls.set(0));
        for (int i = 0; i < 60; i++) {
            StockGrpc.newBlockingStub(channel)
                    .withOption(PickHint.KEY, PickHint.avoiding(first))
                    .withDeadlineAfter(10, TimeUnit.SECONDS)
                    .check(CheckRequest.newBuilder().setSku("s").build());
        }
        assertThat(replicas.get(picked).calls.get())
                .as("calls to the replica to avoid")
                .isZero();
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
        for (Replica replica : replicas) {
            replica.server.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
        }
        StatusRuntimeException failed = org.assertj.core.api.Assertions.catchThrowableOfType(
                StatusRuntimeException.class,
                () -> StockGrpc.newBlockingStub(channel)
                        .withDeadlineAfter(5, TimeUnit.SECONDS)
                        .check(CheckRequest.newBuilder().setSku("s").build()));
        assertThat(failed.getStatus().getCode()).isEqualTo(Status.Code.UNAVAILABLE);
    }
}
