package dev.grpcops.systemtest;

import static org.assertj.core.api.Assertions.assertThat;

import dev.grpcops.cli.Targets;
import dev.grpcops.proto.whoami.v1.WhoAmIGrpc;
import dev.grpcops.proto.whoami.v1.WhoReply;
import dev.grpcops.proto.whoami.v1.WhoRequest;
import com.google.common.util.concurrent.ListenableFuture;
import io.grpc.ManagedChannel;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/** SPEC §6 with three whoami pods on loopback: where one channel's calls land, and why. */
class PinningExperimentTests {

    private static Replicas replicas;

    @BeforeAll
    static void startPods() {
        replicas = Replicas.whoami(Map.of());
    }

    @AfterAll
    static void stopPods() {
        if (replicas != null) {
            replicas.close();
        }
    }

    @AfterEach
    void resumeAll() {
        for (ServiceProcess pod : replicas.pods) {
            Cli.Result resumed = Cli.runJar(Map.of("GRPCOPS_ADMIN_TOKEN", Replicas.TOKEN), "resume", pod.target());
            assertThat(resumed.exit()).as(resumed.err()).isZero();
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
                answered.add(whoami.withDeadlineAfter(3, TimeUnit.SECONDS).who(WhoRequest.getDefaultInstance()).getPod());
            }
            assertThat(answered).as("every pod answered before the drain").containsExactlyInAnyOrder("w1", "w2", "w3");

            Cli.Result drained = Cli.runJar(Map.of("GRPCOPS_ADMIN_TOKEN", Replicas.TOKEN),
                    "drain", replicas.pod("w2").target());
            assertThat(drained.exit()).as(drained.err()).isZero();
            assertThat(drained.out()).contains("\"pod\":\"w2\"", "\"status\":\"NOT_SERVING\"");
            Thread.sleep(500);

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
        assertThat(Cli.run("probe", pod, "--service", "grpcops.v1.WhoAmI").exit()).isZero();

        Cli.Result refused = Cli.runJar(Map.of(), "drain", pod);
        assertThat(refused.exit()).isNotZero();
        Cli.Result wrongToken = Cli.runJar(Map.of("GRPCOPS_ADMIN_TOKEN", "guess"), "drain", pod);
        assertThat(wrongToken.exit()).isNotZero();
        assertThat(wrongToken.err()).contains("PERMISSION_DENIED");
        assertThat(Cli.run("probe", pod, "--service", "grpcops.v1.WhoAmI").exit()).as("nothing changed").isZero();

        assertThat(Cli.runJar(Map.of("GRPCOPS_ADMIN_TOKEN", Replicas.TOKEN), "drain", pod).exit()).isZero();
        Cli.Result readiness = Cli.run("probe", pod, "--service", "grpcops.v1.WhoAmI");
        assertThat(readiness.exit()).isEqualTo(1);
        assertThat(readiness.out()).contains("NOT_SERVING");
        Cli.Result liveness = Cli.run("probe", pod);
        assertThat(liveness.exit()).isZero();
        assertThat(liveness.out()).contains("SERVING");
        Cli.Result unknown = Cli.run("probe", pod, "--service", "nope.v1.Nope");
        assertThat(unknown.exit()).isEqualTo(1);
        assertThat(unknown.err()).contains("NOT_FOUND");
    }

    @Test
    void watchPrintsTheCurrentStatusThenEveryChange() throws Exception {
        ServiceProcess pod = replicas.pod("w1");
        Process watch = new ProcessBuilder(ProcessHandle.current().info().command().orElse("java"), "-jar",
                Cli.jar().toString(), "watch", pod.target(), "--service", "grpcops.v1.WhoAmI").start();
        try {
            var lines = new java.io.BufferedReader(new java.io.InputStreamReader(watch.getInputStream()));
            assertThat(lines.readLine()).matches("\\d{4}-\\d\\d-\\d\\dT.*Z SERVING");
            Cli.runJar(Map.of("GRPCOPS_ADMIN_TOKEN", Replicas.TOKEN), "drain", pod.target());
            assertThat(lines.readLine()).endsWith(" NOT_SERVING");
            Cli.runJar(Map.of("GRPCOPS_ADMIN_TOKEN", Replicas.TOKEN), "resume", pod.target());
            assertThat(lines.readLine()).endsWith(" SERVING");
        } finally {
            watch.destroy();
            watch.waitFor(5, TimeUnit.SECONDS);
        }
    }

    @Test
    void abandonedWatchStreamsAreClosedAndHoldNoThreads() throws Exception {
        ServiceProcess pod = replicas.pod("w1");
        double threadsBefore = Prometheus.sum(pod.metrics(), "jvm_threads_live_threads");
        ManagedChannel channel = pod.channel();
        var received = new java.util.concurrent.CountDownLatch(200);
        for (int i = 0; i < 200; i++) {
            io.grpc.health.v1.HealthGrpc.newStub(channel).watch(
                    io.grpc.health.v1.HealthCheckRequest.newBuilder().setService(i % 2 == 0 ? "grpcops.v1.WhoAmI" : "unknown").build(),
                    new io.grpc.stub.StreamObserver<>() {
                        @Override
                        public void onNext(io.grpc.health.v1.HealthCheckResponse value) {
                            received.countDown();
                        }

                        @Override
                        public void onError(Throwable t) {
                        }

                        @Override
                        public void onCompleted() {
                        }
                    });
        }
        assertThat(received.await(10, TimeUnit.SECONDS)).as("every stream got its first status").isTrue();
        double threadsWatching = Prometheus.sum(pod.metrics(), "jvm_threads_live_threads");
        assertThat(threadsWatching).as("no thread per open stream").isLessThan(threadsBefore + 50);

        channel.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);

        org.awaitility.Awaitility.await().atMost(Duration.ofSeconds(10)).untilAsserted(() ->
                assertThat(Prometheus.sum(pod.metrics(), "grpc_server_processing_duration_seconds_count",
                        "method=\"Watch\"", "statusCode=\"CANCELLED\"")).as("the server closed every abandoned stream")
                        .isGreaterThanOrEqualTo(200));
    }
}
