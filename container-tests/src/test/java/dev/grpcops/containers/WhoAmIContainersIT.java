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
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.ExtendWith;

/** The Compose suite's three WhoAmI containers: rr spreads, hc skips a drained replica, the health names flip. */
@ExtendWith(ComposeSuite.Resolver.class)
@Timeout(value = 2, unit = TimeUnit.MINUTES, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
class WhoAmIContainersIT {

    private static final String READINESS = "grpcops.v1.WhoAmI";
    private static final List<String> PODS = List.of("whoami-1", "whoami-2", "whoami-3");
    /**
     * How long a service keeps serving after it says NOT_SERVING (grpcops.shutdown.drain-delay's
     * default): the time health-checking clients have to move away from a draining pod.
     */
    private static final Duration DEFAULT_DRAIN_DELAY = Duration.ofSeconds(5);

    private static ComposeSuite suite;

    @BeforeAll
    @Timeout(value = 12, unit = TimeUnit.MINUTES, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
    static void up(ComposeSuite compose) {
        suite = compose;
    }

    @AfterEach
    void resumeAll() {
        PODS.forEach(pod -> admin(pod, WhoAmIGrpc.WhoAmIBlockingStub::resume));
    }

    @Test
    void roundRobinSpreadsAcrossTheContainers() {
        ManagedChannel channel = Targets.channel(addressList(), Targets.ChannelConfig.rr);
        try {
            awaitEveryPod(channel);
            Map<String, Integer> counts = spread(channel, 60);
            assertThat(counts).containsOnlyKeys(PODS);
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

            admin("whoami-1", WhoAmIGrpc.WhoAmIBlockingStub::drain);
            // The channel hears NOT_SERVING on its health Watch of w1 and drops w1 from its round_robin
            // picker. Three calls in a row reach each ready pod once, so three in a row without w1 mean
            // w1 is out. The bound is what clients get in production to move away: the drain delay.
            await("whoami-1 out of the channel's picker")
                    .atMost(DEFAULT_DRAIN_DELAY)
                    .pollInterval(Duration.ofMillis(50))
                    .until(() -> !spread(channel, 3).containsKey("whoami-1"));
            assertThat(spread(channel, 60)).doesNotContainKey("whoami-1").containsKeys("whoami-2", "whoami-3");
        } finally {
            channel.shutdownNow();
        }
    }

    @Test
    void readinessCheckFlipsWithDrainWhileLivenessStaysServing() {
        String pod = "whoami-2";
        assertThat(check(pod, READINESS)).isEqualTo(ServingStatus.SERVING);
        admin(pod, WhoAmIGrpc.WhoAmIBlockingStub::drain);
        assertThat(check(pod, READINESS)).isEqualTo(ServingStatus.NOT_SERVING);
        assertThat(check(pod, "")).isEqualTo(ServingStatus.SERVING);
    }

    /** Until each subchannel is connected, the first ones to connect take the calls. */
    private static void awaitEveryPod(ManagedChannel channel) {
        Set<String> answered = new HashSet<>();
        for (int i = 0; i < 300 && answered.size() < 3; i++) {
            answered.addAll(spread(channel, 1).keySet());
        }
        assertThat(answered).as("every pod answered").containsExactlyInAnyOrderElementsOf(PODS);
    }

    private static String addressList() {
        return PODS.stream().map(pod -> suite.address(pod, 50051)).collect(Collectors.joining(","));
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

    private static ServingStatus check(String pod, String service) {
        ManagedChannel channel = suite.channel(pod, 50051);
        try {
            return HealthGrpc.newBlockingStub(channel)
                    .withDeadlineAfter(3, TimeUnit.SECONDS)
                    .check(HealthCheckRequest.newBuilder().setService(service).build())
                    .getStatus();
        } finally {
            channel.shutdownNow();
        }
    }

    private static void admin(String pod, BiFunction<WhoAmIGrpc.WhoAmIBlockingStub, DrainRequest, ?> operation) {
        ManagedChannel channel = suite.channel(pod, 50051);
        try {
            Object unused = operation.apply(
                    WhoAmIGrpc.newBlockingStub(channel)
                            .withInterceptors(AdminCredentials.bearer(ComposeSuite.ADMIN_TOKEN))
                            .withDeadlineAfter(3, TimeUnit.SECONDS),
                    DrainRequest.getDefaultInstance());
        } finally {
            channel.shutdownNow();
        }
    }
}
