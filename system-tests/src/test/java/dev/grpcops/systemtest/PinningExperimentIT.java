package dev.grpcops.systemtest;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.google.common.util.concurrent.ListenableFuture;
import dev.grpcops.admin.AdminCredentials;
import dev.grpcops.cli.Targets;
import dev.grpcops.proto.whoami.v1.DrainRequest;
import dev.grpcops.proto.whoami.v1.WhoAmIGrpc;
import dev.grpcops.proto.whoami.v1.WhoReply;
import dev.grpcops.proto.whoami.v1.WhoRequest;
import io.grpc.ManagedChannel;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** design §6 with three whoami pods on loopback: where one channel's calls land, and why. */
@Timeout(value = 2, unit = TimeUnit.MINUTES, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
@Order(2) // the lanes' order: junit-platform.properties
class PinningExperimentIT {

    /**
     * How long a service keeps serving after it says NOT_SERVING (grpcops.shutdown.drain-delay's
     * default): the time health-checking clients have to move away from a draining pod.
     */
    private static final Duration DEFAULT_DRAIN_DELAY = Duration.ofSeconds(5);
    /** How long the watch command may take to print a line: a JVM start on a loaded machine, at most. */
    private static final Duration WATCH_LINE = Duration.ofSeconds(30);

    private static Replicas replicas;

    @BeforeAll
    @Timeout(value = 5, unit = TimeUnit.MINUTES, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
    static void startPods() {
        replicas = Replicas.whoami(Map.of());
    }

    @AfterAll
    @Timeout(value = 2, unit = TimeUnit.MINUTES, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
    static void stopPods() {
        if (replicas != null) {
            replicas.close();
        }
    }

    /** Every pod back in traffic; straight over gRPC, the CLI's own resume is tested where it is used. */
    @AfterEach
    void resumeAll() {
        for (ServiceProcess pod : replicas.pods) {
            ManagedChannel channel = pod.channel();
            try {
                WhoAmIGrpc.newBlockingStub(channel)
                        .withInterceptors(AdminCredentials.bearer(Replicas.TOKEN))
                        .withDeadlineAfter(10, TimeUnit.SECONDS)
                        .resume(DrainRequest.getDefaultInstance());
            } finally {
                channel.shutdownNow();
            }
        }
    }

    @Test
    void oneChannelThroughAConnectionLevelBalancerIsPinnedToOnePod() {
        try (HaProxy clusterIp = HaProxy.inFrontOf(replicas.pods)) {
            Cli.Result spread = Cli.run("spread", clusterIp.target());

            assertThat(spread.exit()).as(spread.err()).isZero();
            assertThat(spread.pods()).hasSize(1).containsValue(60);
        }
    }

    @Test
    void roundRobinOverThePodAddressesSpreadsTheCalls() {
        Cli.Result spread = Cli.run("spread", replicas.addressList(), "--config", "rr");

        assertThat(spread.exit()).as(spread.err()).isZero();
        assertThat(spread.pods()).containsOnlyKeys("w1", "w2", "w3");
        assertThat(spread.pods().values()).allSatisfy(calls -> assertThat(calls).isGreaterThanOrEqualTo(15));
    }

    @Test
    void healthCheckingChannelStopsCallingADrainedPod() throws Exception {
        ManagedChannel channel = Targets.channel(replicas.addressList(), Targets.ChannelConfig.hc);
        try {
            WhoAmIGrpc.WhoAmIBlockingStub whoami = WhoAmIGrpc.newBlockingStub(channel);
            Set<String> answered = new HashSet<>();
            for (int i = 0; i < 300 && answered.size() < 3; i++) {
                answered.add(whoami.withDeadlineAfter(3, TimeUnit.SECONDS)
                        .who(WhoRequest.getDefaultInstance())
                        .getPod());
            }
            assertThat(answered).as("every pod answered before the drain").containsExactlyInAnyOrder("w1", "w2", "w3");

            Cli.Result drained = Cli.runJar(
                    Map.of("GRPCOPS_ADMIN_TOKEN", Replicas.TOKEN),
                    "drain",
                    replicas.pod("w2").target());
            assertThat(drained.exit()).as(drained.err()).isZero();
            assertThat(drained.out()).contains("\"pod\":\"w2\"", "\"status\":\"NOT_SERVING\"");
            // The channel hears NOT_SERVING on its health Watch of w2 and drops w2 from its round_robin
            // picker. Three calls in a row reach each ready pod once, so three in a row without w2 mean
            // w2 is out. The bound is what clients get in production to move away: the drain delay.
            await("w2 out of the channel's picker")
                    .atMost(DEFAULT_DRAIN_DELAY)
                    .pollInterval(Duration.ofMillis(50))
                    .until(() -> Stream.generate(() -> whoami.withDeadlineAfter(3, TimeUnit.SECONDS)
                                    .who(WhoRequest.getDefaultInstance())
                                    .getPod())
                            .limit(3)
                            .noneMatch("w2"::equals));

            WhoAmIGrpc.WhoAmIFutureStub async = WhoAmIGrpc.newFutureStub(channel);
            List<ListenableFuture<WhoReply>> calls = new ArrayList<>();
            for (int i = 0; i < 60; i++) {
                calls.add(async.withDeadlineAfter(3, TimeUnit.SECONDS).who(WhoRequest.getDefaultInstance()));
            }
            List<String> pods = new ArrayList<>();
            for (ListenableFuture<WhoReply> call : calls) {
                pods.add(call.get(5, TimeUnit.SECONDS).getPod());
            }
            assertThat(pods).hasSize(60).doesNotContain("w2").contains("w1", "w3");
        } finally {
            channel.shutdownNow();
        }
    }

    @Test
    void kubeletStyleProbesSeeReadinessFlipWhileLivenessStays() {
        String pod = replicas.pod("w3").target();
        assertThat(probe(pod, "grpcops.v1.WhoAmI").exit()).isZero();

        Cli.Result refused = Cli.runJar(Map.of(), "drain", pod);
        assertThat(refused.exit()).as("no token: refused before any call").isEqualTo(2);
        assertThat(refused.err()).contains("set GRPCOPS_ADMIN_TOKEN");
        Cli.Result wrongToken = Cli.runJar(Map.of("GRPCOPS_ADMIN_TOKEN", "guess"), "drain", pod);
        assertThat(wrongToken.exit()).isNotZero();
        assertThat(wrongToken.err()).contains("PERMISSION_DENIED");
        assertThat(probe(pod, "grpcops.v1.WhoAmI").exit()).as("nothing changed").isZero();

        Cli.Result drained = Cli.runJar(Map.of("GRPCOPS_ADMIN_TOKEN", Replicas.TOKEN), "drain", pod);
        assertThat(drained.exit()).as(drained.err()).isZero();
        Cli.Result readiness = probe(pod, "grpcops.v1.WhoAmI");
        assertThat(readiness.exit()).isEqualTo(1);
        assertThat(readiness.out()).contains("NOT_SERVING");
        Cli.Result liveness = probe(pod, "");
        assertThat(liveness.exit()).isZero();
        assertThat(liveness.out()).contains("SERVING").doesNotContain("NOT_SERVING");
        Cli.Result unknown = probe(pod, "nope.v1.Nope");
        assertThat(unknown.exit()).isEqualTo(1);
        assertThat(unknown.err()).contains("NOT_FOUND");
    }

    /**
     * The CLI's probe, as kubelet makes it, but with a 5 s deadline instead of kubelet's 1 s: this
     * test is about the status each probe sees, and a loaded machine may stall a first call.
     */
    private static Cli.Result probe(String pod, String service) {
        return Cli.run("probe", pod, "--service", service, "--timeout", "5s");
    }

    @Test
    void watchPrintsTheCurrentStatusThenEveryChange() throws Exception {
        ServiceProcess pod = replicas.pod("w1");
        Path errors = Path.of("target/watch-" + pod.name + ".err");
        Process watch = ChildProcesses.track(new ProcessBuilder(
                        ProcessHandle.current().info().command().orElse("java"),
                        "-jar",
                        Cli.jar().toString(),
                        "watch",
                        pod.target(),
                        "--service",
                        "grpcops.v1.WhoAmI")
                .redirectError(errors.toFile())
                .start());
        try {
            BlockingQueue<String> lines = OutputLines.of(watch);
            assertThat(OutputLines.next(lines, WATCH_LINE)).matches("\\d{4}-\\d\\d-\\d\\dT.*Z SERVING");
            Cli.Result drained = Cli.runJar(Map.of("GRPCOPS_ADMIN_TOKEN", Replicas.TOKEN), "drain", pod.target());
            assertThat(drained.exit()).as(drained.err()).isZero();
            assertThat(OutputLines.next(lines, WATCH_LINE)).endsWith(" NOT_SERVING");
            Cli.Result resumed = Cli.runJar(Map.of("GRPCOPS_ADMIN_TOKEN", Replicas.TOKEN), "resume", pod.target());
            assertThat(resumed.exit()).as(resumed.err()).isZero();
            assertThat(OutputLines.next(lines, WATCH_LINE)).endsWith(" SERVING"); // the space rules out NOT_SERVING
        } finally {
            watch.destroy();
            if (!watch.waitFor(5, TimeUnit.SECONDS)) {
                watch.destroyForcibly().waitFor(5, TimeUnit.SECONDS);
            }
        }
    }

    @Test
    void abandonedWatchStreamsAreClosedAndHoldNoThreads() throws Exception {
        ServiceProcess pod = replicas.pod("w1");
        double threadsBefore = Prometheus.sum(pod.metrics(), "jvm_threads_live_threads");
        ManagedChannel channel = pod.channel();
        var received = new java.util.concurrent.CountDownLatch(200);
        for (int i = 0; i < 200; i++) {
            io.grpc.health.v1.HealthGrpc.newStub(channel)
                    .watch(
                            io.grpc.health.v1.HealthCheckRequest.newBuilder()
                                    .setService(i % 2 == 0 ? "grpcops.v1.WhoAmI" : "unknown")
                                    .build(),
                            new io.grpc.stub.StreamObserver<>() {
                                @Override
                                public void onNext(io.grpc.health.v1.HealthCheckResponse value) {
                                    received.countDown();
                                }

                                @Override
                                public void onError(Throwable t) {}

                                @Override
                                public void onCompleted() {}
                            });
        }
        assertThat(received.await(30, TimeUnit.SECONDS))
                .as("every stream got its first status")
                .isTrue();
        double threadsWatching = Prometheus.sum(pod.metrics(), "jvm_threads_live_threads");
        assertThat(threadsWatching).as("no thread per open stream").isLessThan(threadsBefore + 50);

        channel.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);

        await().atMost(Duration.ofSeconds(30))
                .untilAsserted(() -> assertThat(Prometheus.sum(
                                pod.metrics(),
                                "grpc_server_processing_duration_seconds_count",
                                "method=\"Watch\"",
                                "statusCode=\"CANCELLED\""))
                        .as("the server closed every abandoned stream")
                        .isGreaterThanOrEqualTo(200));
    }
}
