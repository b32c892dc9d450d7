package dev.grpcops.containers;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.grpcops.admin.AdminCredentials;
import dev.grpcops.cli.Targets;
import dev.grpcops.proto.whoami.v1.DrainRequest;
import dev.grpcops.proto.whoami.v1.WhoAmIGrpc;
import dev.grpcops.proto.whoami.v1.WhoRequest;
import io.grpc.ManagedChannel;
import io.grpc.health.v1.HealthCheckRequest;
import io.grpc.health.v1.HealthCheckResponse.ServingStatus;
import io.grpc.health.v1.HealthGrpc;
import java.time.Duration;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.function.BiFunction;
import java.util.stream.Collectors;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.testcontainers.containers.GenericContainer;
import org.testcontainers.containers.Network;
import org.testcontainers.lifecycle.Startables;

/** Three whoami containers: rr spreads, hc skips a drained replica, kubelet-style probes flip. */
@Timeout(value = 2, unit = TimeUnit.MINUTES, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
class WhoAmIContainersIT {

    private static final String READINESS = "grpcops.v1.WhoAmI";
    /**
     * How long a service keeps serving after it says NOT_SERVING (grpcops.shutdown.drain-delay's
     * default): the time health-checking clients have to move away from a draining pod.
     */
    private static final Duration DEFAULT_DRAIN_DELAY = Duration.ofSeconds(5);

    private static Network network;
    private static List<GenericContainer<?>> pods;

    @BeforeAll
    @Timeout(value = 10, unit = TimeUnit.MINUTES, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
    static void startPods() {
        Docker.requireEngine();
        network = Network.newNetwork();
        pods = List.of(pod("w1"), pod("w2"), pod("w3"));
        try {
            Startables.deepStart(pods).join();
        } catch (RuntimeException e) {
            stopPods();
            throw e;
        }
    }

    @AfterAll
    @Timeout(value = 3, unit = TimeUnit.MINUTES, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
    static void stopPods() {
        ServiceContainers.removeAll(
                network, pods == null ? new GenericContainer<?>[0] : pods.toArray(GenericContainer<?>[]::new));
    }

    @AfterEach
    void resumeAll() {
        pods.forEach(pod -> admin(pod, WhoAmIGrpc.WhoAmIBlockingStub::resume));
    }

    @Test
    void roundRobinSpreadsAcrossTheContainers() {
        ManagedChannel channel = Targets.channel(addressList(), Targets.ChannelConfig.rr);
        try {
            awaitEveryPod(channel);
            Map<String, Integer> counts = spread(channel, 60);
            assertThat(counts).containsOnlyKeys("w1", "w2", "w3");
            assertThat(counts.values()).allSatisfy(n -> assertThat(n).isGreaterThanOrEqualTo(15));
        } finally {
            channel.shutdownNow();
        }
    }

    @Test
    void healthCheckingSkipsADrainedContainer() {
        ManagedChannel channel = Targets.channel(addressList(), Targets.ChannelConfig.hc);
        try {
            awaitEveryPod(channel);

            admin(pods.get(0), WhoAmIGrpc.WhoAmIBlockingStub::drain);
            // The channel hears NOT_SERVING on its health Watch of w1 and drops w1 from its round_robin
            // picker. Three calls in a row reach each ready pod once, so three in a row without w1 mean
            // w1 is out. The bound is what clients get in production to move away: the drain delay.
            await("w1 out of the channel's picker")
                    .atMost(DEFAULT_DRAIN_DELAY)
                    .pollInterval(Duration.ofMillis(50))
                    .until(() -> !spread(channel, 3).containsKey("w1"));
            assertThat(spread(channel, 60)).doesNotContainKey("w1").containsKeys("w2", "w3");
        } finally {
            channel.shutdownNow();
        }
    }

    @Test
    void readinessCheckFlipsWithDrainWhileLivenessStaysServing() {
        GenericContainer<?> pod = pods.get(1);
        assertThat(check(pod, READINESS)).isEqualTo(ServingStatus.SERVING);
        admin(pod, WhoAmIGrpc.WhoAmIBlockingStub::drain);
        assertThat(check(pod, READINESS)).isEqualTo(ServingStatus.NOT_SERVING);
        assertThat(check(pod, "")).isEqualTo(ServingStatus.SERVING);
        assertThat(pod.isRunning()).isTrue();
    }

    /** Until each subchannel is connected, the first ones to connect take the calls. */
    private static void awaitEveryPod(ManagedChannel channel) {
        Set<String> answered = new HashSet<>();
        for (int i = 0; i < 300 && answered.size() < 3; i++) {
            answered.addAll(spread(channel, 1).keySet());
        }
        assertThat(answered).as("every pod answered").containsExactlyInAnyOrder("w1", "w2", "w3");
    }

    private static GenericContainer<?> pod(String name) {
        return ServiceContainers.service("whoami-service", network, "whoami", 50051, READINESS)
                .withEnv("POD_NAME", name);
    }

    private static String addressList() {
        return pods.stream()
                .map(p -> p.getHost() + ":" + p.getMappedPort(50051))
                .collect(Collectors.joining(","));
    }

    private static Map<String, Integer> spread(ManagedChannel channel, int calls) {
        Map<String, Integer> counts = new HashMap<>();
        WhoAmIGrpc.WhoAmIBlockingStub whoami = WhoAmIGrpc.newBlockingStub(channel);
        for (int i = 0; i < calls; i++) {
            counts.merge(
                    whoami.withDeadlineAfter(3, TimeUnit.SECONDS)
                            .who(WhoRequest.getDefaultInstance())
                            .getPod(),
                    1,
                    Integer::sum);
        }
        return counts;
    }

    private static ServingStatus check(GenericContainer<?> pod, String service) {
        ManagedChannel channel = ServiceContainers.channel(pod, 50051);
        try {
            return HealthGrpc.newBlockingStub(channel)
                    .withDeadlineAfter(3, TimeUnit.SECONDS)
                    .check(HealthCheckRequest.newBuilder().setService(service).build())
                    .getStatus();
        } finally {
            channel.shutdownNow();
        }
    }

    private static void admin(
            GenericContainer<?> pod, BiFunction<WhoAmIGrpc.WhoAmIBlockingStub, DrainRequest, ?> operation) {
        ManagedChannel channel = ServiceContainers.channel(pod, 50051);
        try {
            Object unused = operation.apply(
                    WhoAmIGrpc.newBlockingStub(channel)
                            .withInterceptors(AdminCredentials.bearer(ServiceContainers.ADMIN_TOKEN))
                            .withDeadlineAfter(3, TimeUnit.SECONDS),
                    DrainRequest.getDefaultInstance());
        } finally {
            channel.shutdownNow();
        }
    }
}
