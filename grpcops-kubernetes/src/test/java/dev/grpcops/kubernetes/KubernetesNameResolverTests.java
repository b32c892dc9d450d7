package dev.grpcops.kubernetes;

import static dev.grpcops.kubernetes.Slices.notReady;
import static dev.grpcops.kubernetes.Slices.ready;
import static dev.grpcops.kubernetes.Slices.terminating;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;
import static org.awaitility.Awaitility.await;

import dev.grpcops.client.ServiceConfigs;
import dev.grpcops.proto.whoami.v1.WhoAmIGrpc;
import dev.grpcops.proto.whoami.v1.WhoRequest;
import io.fabric8.kubernetes.api.model.StatusBuilder;
import io.fabric8.kubernetes.client.server.mock.KubernetesCrudDispatcher;
import io.fabric8.kubernetes.client.utils.Serialization;
import io.fabric8.mockwebserver.http.Dispatcher;
import io.fabric8.mockwebserver.http.MockResponse;
import io.fabric8.mockwebserver.http.RecordedRequest;
import io.grpc.ManagedChannel;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * The resolver on a real channel (health-checked round_robin, as the services configure it) over
 * real gRPC servers on 127.0.0.2-4, with fabric8's mock API server in CRUD mode standing in for
 * the cluster: the test writes EndpointSlices as the EndpointSlice controller would.
 */
@Timeout(value = 90, unit = TimeUnit.SECONDS)
class KubernetesNameResolverTests {

    private static final String A = Backends.IPS.get(0);
    private static final String B = Backends.IPS.get(1);
    private static final String C = Backends.IPS.get(2);
    private static final String TARGET = "kubernetes:///who." + MockApi.NAMESPACE + ":grpc";

    private MockApi api;
    private Backends backends;
    private final RecordingListener listener = new RecordingListener();
    private final List<AutoCloseable> closing = new ArrayList<>();

    @BeforeEach
    void start() {
        api = MockApi.crud();
        backends = new Backends(null);
    }

    @AfterEach
    void stop() throws Exception {
        for (int i = closing.size() - 1; i >= 0; i--) {
            closing.get(i).close();
        }
        backends.close();
        api.close();
    }

    @Test
    void aNewPodGetsCallsOnTheSameConnectionsAsSoonAsItsSliceSaysReady() throws Exception {
        Slices.put(api.admin(), "who", backends.port, ready(A), ready(B));
        ManagedChannel channel = channel(TARGET);
        SteadyCaller caller = caller(channel);
        await().atMost(Duration.ofSeconds(10)).until(() -> backends.calls(A) > 10 && backends.calls(B) > 10);
        assertThat(listener.endpoints).containsEntry(TARGET, 2);

        long scaledUp = System.nanoTime();
        Slices.put(api.admin(), "who", backends.port, ready(A), ready(B), ready(C));
        // A watch event, not a reconnect: moments on any machine (the time is printed, not held to).
        await().atMost(Duration.ofSeconds(10))
                .pollInterval(Duration.ofMillis(5))
                .until(() -> backends.calls(C) > 0);
        long firstCallMs = (System.nanoTime() - scaledUp) / 1_000_000;
        System.out.printf(
                "kubernetes:/// scale-up: first call on the new pod %d ms after the EndpointSlice changed%n",
                firstCallMs);

        int callsOnC = backends.calls(C);
        await().atMost(Duration.ofSeconds(5)).until(() -> backends.calls(C) > callsOnC + 20);
        assertThat(caller.failed).as("failed calls: %s", caller.failures).hasValue(0);
        // Spread on the same channel, not after a reconnect: one connection per pod, ever.
        assertThat(Backends.IPS)
                .allSatisfy(ip -> assertThat(backends.connections(ip)).as(ip).isEqualTo(1));
        assertThat(listener.endpoints).containsEntry(TARGET, 3);
    }

    @Test
    void aPodThatTurnsNotReadyOrTerminatingGetsNoMoreCallsAndNoCallFails() throws Exception {
        Slices.put(api.admin(), "who", backends.port, ready(A), ready(B), ready(C));
        ManagedChannel channel = channel(TARGET);
        SteadyCaller caller = caller(channel);
        await().atMost(Duration.ofSeconds(10))
                .until(() -> Backends.IPS.stream().allMatch(ip -> backends.calls(ip) > 10));

        long changed = System.nanoTime();
        Slices.put(api.admin(), "who", backends.port, ready(A), ready(B), notReady(C));
        awaitNoMoreCalls(caller, C, changed);

        changed = System.nanoTime();
        Slices.put(api.admin(), "who", backends.port, ready(A), terminating(B), notReady(C));
        awaitNoMoreCalls(caller, B, changed);

        assertThat(caller.failed).as("failed calls: %s", caller.failures).hasValue(0);
        assertThat(listener.endpoints).containsEntry(TARGET, 1);
    }

    /** The health-checking round_robin the channel is configured with still works on top. */
    @Test
    void aDrainingPodIsSkippedByHealthCheckingOnTop() throws Exception {
        Slices.put(api.admin(), "who", backends.port, ready(A), ready(B));
        ManagedChannel channel = channel(TARGET);
        SteadyCaller caller = caller(channel);
        await().atMost(Duration.ofSeconds(10)).until(() -> backends.calls(A) > 10 && backends.calls(B) > 10);
        long drained = System.nanoTime();
        backends.drain(B);
        awaitNoMoreCalls(caller, B, drained);
        assertThat(caller.failed).as("failed calls: %s", caller.failures).hasValue(0);
    }

    @Test
    void callsKeepFlowingToTheLastKnownPodsWhileTheApiServerIsDown() throws Exception {
        Slices.put(api.admin(), "who", backends.port, ready(A), ready(B));
        ManagedChannel channel = channel(TARGET);
        SteadyCaller caller = caller(channel);
        await().atMost(Duration.ofSeconds(10)).until(() -> backends.calls(A) > 10 && backends.calls(B) > 10);

        api.stop();
        long stopped = System.nanoTime();
        await().atMost(Duration.ofSeconds(10)).until(() -> listener.errors(TARGET) > 0);
        int ok = caller.ok.get();
        await().atMost(Duration.ofSeconds(10))
                .until(() ->
                        caller.ok.get() > ok + 200 && caller.lastAnswer(A) > stopped && caller.lastAnswer(B) > stopped);
        assertThat(caller.failed).as("failed calls: %s", caller.failures).hasValue(0);
        assertThat(listener.endpoints).containsEntry(TARGET, 2);

        api.start();
        long restarted = System.nanoTime();
        Slices.put(api.admin(), "who", backends.port, ready(A), ready(B), ready(C));
        // The watch is re-established with backoff (here from 200 ms, doubling): then the change arrives.
        await().atMost(Duration.ofSeconds(30))
                .pollInterval(Duration.ofMillis(10))
                .until(() -> backends.calls(C) > 0);
        System.out.printf(
                "kubernetes:/// API server back: change seen %d ms after the restart, %d watch errors counted%n",
                (System.nanoTime() - restarted) / 1_000_000, listener.errors(TARGET));
        assertThat(caller.failed).as("failed calls: %s", caller.failures).hasValue(0);
    }

    @Test
    void aMissingServiceFailsCallsNamingItUntilItAppears() throws Exception {
        ManagedChannel channel = channel("kubernetes:///ghost:grpc");
        StatusRuntimeException failure = catchThrowableOfType(StatusRuntimeException.class, () -> who(channel));
        assertThat(failure.getStatus().getCode()).isEqualTo(Status.Code.UNAVAILABLE);
        assertThat(failure.getStatus().getDescription())
                .contains("Service 'ghost' not found in namespace 'grpcops'", "kubernetes:///ghost:grpc");

        Slices.service(api.admin(), "ghost", backends.port);
        Slices.put(api.admin(), "ghost", backends.port, ready(A));
        await().atMost(Duration.ofSeconds(10))
                .ignoreExceptions()
                .until(() -> who(channel).equals(A));
    }

    @ParameterizedTest
    @CsvSource(
            delimiter = '|',
            value = {
                "kubernetes:///             | names no Service",
                "kubernetes:///who          | names no port",
                "kubernetes:///who.grpcops: | names no port",
                "kubernetes:///Who:grpc     | 'Who' is not a valid Service name",
                "kubernetes:///who:99999    | port 99999 is not 1-65535",
                "kubernetes:///who:-grpc-   | is neither a port number nor a valid port name",
                "kubernetes:///who.a.b:grpc | is not <service> or <service>.<namespace>",
                "kubernetes://api/who:grpc  | names an authority",
                "kubernetes:///who:http     | Service 'who' in namespace 'grpcops' has no port named 'http' (its EndpointSlices have: grpc=",
                "kubernetes:///who:50000    | has no port 50000",
            })
    void aBadTargetFailsCallsSayingWhatIsWrong(String target, String message) {
        Slices.put(api.admin(), "who", backends.port, ready(A));
        ManagedChannel channel = channel(target);
        StatusRuntimeException failure = catchThrowableOfType(StatusRuntimeException.class, () -> who(channel));
        assertThat(failure.getStatus().getCode()).isEqualTo(Status.Code.UNAVAILABLE);
        assertThat(failure.getStatus().getDescription()).contains(message);
    }

    @Test
    void aMissingPermissionIsNamed() throws Exception {
        MockApi forbidding = MockApi.answering(new Dispatcher() {
            @Override
            public MockResponse dispatch(RecordedRequest request) {
                return new MockResponse()
                        .setResponseCode(403)
                        .setBody(Serialization.asJson(new StatusBuilder()
                                .withStatus("Failure")
                                .withReason("Forbidden")
                                .withCode(403)
                                .withMessage(
                                        "endpointslices.discovery.k8s.io"
                                                + " is forbidden: User \"system:serviceaccount:grpcops:default\" cannot list resource")
                                .build()));
            }
        });
        closing.add(forbidding);
        ManagedChannel channel = channel(TARGET, new KubernetesNameResolverProvider(forbidding::config, listener, 4));
        StatusRuntimeException failure = catchThrowableOfType(StatusRuntimeException.class, () -> who(channel));
        assertThat(failure.getStatus().getCode()).isEqualTo(Status.Code.UNAVAILABLE);
        assertThat(failure.getStatus().getDescription())
                .contains("needs get/list/watch on endpointslices.discovery.k8s.io in namespace 'grpcops'");
        assertThat(listener.errors(TARGET)).isPositive();
    }

    /**
     * A proxy in front of the API server that answers WebSocket upgrades 503: fabric8 watches over
     * plain HTTP instead, and that watch is healthy, so no error is counted and no outage logged.
     */
    @Test
    void aWatchOverHttpBehindAProxyThatRefusesWebSocketsIsNoOutage() throws Exception {
        KubernetesCrudDispatcher crud = new KubernetesCrudDispatcher();
        AtomicInteger refusedUpgrades = new AtomicInteger();
        MockApi proxied = MockApi.answering(new Dispatcher() {
            @Override
            public MockResponse dispatch(RecordedRequest request) {
                if ("websocket".equalsIgnoreCase(request.getHeader("Upgrade"))) {
                    refusedUpgrades.incrementAndGet();
                    return new MockResponse().setResponseCode(503);
                }
                if (request.getPath().contains("watch=true")) {
                    return httpWatch(crud, request);
                }
                return crud.dispatch(request);
            }
        });
        closing.add(proxied);
        Slices.put(proxied.admin(), "who", backends.port, ready(A));
        ManagedChannel channel = channel(TARGET, new KubernetesNameResolverProvider(proxied::config, listener, 4));
        assertThat(who(channel)).isEqualTo(A);

        Slices.put(proxied.admin(), "who", backends.port, ready(A), ready(B));
        await().atMost(Duration.ofSeconds(10)).until(() -> Integer.valueOf(2).equals(listener.endpoints.get(TARGET)));
        assertThat(refusedUpgrades).as("upgrades the proxy refused").hasPositiveValue();
        assertThat(listener.errors(TARGET)).as("watch errors counted").isZero();
    }

    /**
     * A watch over plain HTTP, as a long poll: the slices as they are now, as ADDED events, then the
     * response ends and fabric8 watches again (the CRUD dispatcher only serves WebSocket watches).
     */
    private static MockResponse httpWatch(KubernetesCrudDispatcher crud, RecordedRequest watch) {
        String list = watch.getPath().replace("watch=true", "watch=false");
        MockResponse current = crud.dispatch(new RecordedRequest(
                "GET " + list + " HTTP/1.1",
                io.fabric8.mockwebserver.dsl.HttpMethod.GET,
                list,
                watch.getHeaders(),
                watch.getBody()));
        StringBuilder events = new StringBuilder();
        Serialization.unmarshal(
                        current.getBody().readUtf8(),
                        io.fabric8.kubernetes.api.model.discovery.v1.EndpointSliceList.class)
                .getItems()
                .forEach(slice -> events.append(
                                Serialization.asJson(new io.fabric8.kubernetes.api.model.WatchEvent(slice, "ADDED")))
                        .append('\n'));
        return new MockResponse()
                .setResponseCode(200)
                .setHeader("Content-Type", "application/json")
                .setBodyDelay(Duration.ofMillis(100))
                .setBody(events.toString());
    }

    @Test
    void shuttingTheChannelDownStopsTheWatchAndForgetsTheTarget() throws Exception {
        Slices.put(api.admin(), "who", backends.port, ready(A));
        ManagedChannel channel = channel(TARGET);
        assertThat(who(channel)).isEqualTo(A);
        channel.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
        await().atMost(Duration.ofSeconds(5)).until(() -> listener.closed.containsKey(TARGET));
    }

    /** Waits until {@code pod} gets no more calls (20 answers in a row from others), and checks it stays so. */
    private void awaitNoMoreCalls(SteadyCaller caller, String pod, long since) {
        int[] seen = {backends.calls(pod), caller.ok.get()};
        await().atMost(Duration.ofSeconds(10))
                .pollInterval(Duration.ofMillis(5))
                .until(() -> {
                    int calls = backends.calls(pod);
                    if (calls != seen[0]) {
                        seen[0] = calls;
                        seen[1] = caller.ok.get();
                    }
                    return caller.ok.get() - seen[1] >= 20;
                });
        long lastMs = Math.max(0, (caller.lastAnswer(pod) - since) / 1_000_000);
        System.out.printf("%s: last call %d ms after it left%n", pod, lastMs);
        int calls = backends.calls(pod);
        int ok = caller.ok.get();
        await().atMost(Duration.ofSeconds(10)).until(() -> caller.ok.get() > ok + 100);
        assertThat(backends.calls(pod)).as("calls on " + pod + " after it left").isEqualTo(calls);
    }

    private ManagedChannel channel(String target) {
        return channel(target, new KubernetesNameResolverProvider(api::config, listener, 4));
    }

    @SuppressWarnings("deprecation") // nameResolverFactory: this channel alone gets the provider under test
    private ManagedChannel channel(String target, KubernetesNameResolverProvider provider) {
        ManagedChannel channel = NettyChannelBuilder.forTarget(target)
                .nameResolverFactory(provider)
                .usePlaintext()
                .defaultServiceConfig(ServiceConfigs.healthCheckedRoundRobin(WhoAmIGrpc.SERVICE_NAME))
                .build();
        closing.add(() -> channel.shutdownNow().awaitTermination(5, TimeUnit.SECONDS));
        return channel;
    }

    private SteadyCaller caller(ManagedChannel channel) {
        SteadyCaller caller = new SteadyCaller(channel);
        closing.add(caller);
        return caller;
    }

    private static String who(ManagedChannel channel) {
        return WhoAmIGrpc.newBlockingStub(channel)
                .withDeadlineAfter(5, TimeUnit.SECONDS)
                .who(WhoRequest.getDefaultInstance())
                .getPod();
    }
}
