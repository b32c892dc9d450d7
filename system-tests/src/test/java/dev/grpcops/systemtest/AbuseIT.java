package dev.grpcops.systemtest;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.google.common.util.concurrent.ListenableFuture;
import dev.grpcops.proto.chain.v1.CheckReply;
import dev.grpcops.proto.chain.v1.CheckRequest;
import dev.grpcops.proto.chain.v1.CheckoutReply;
import dev.grpcops.proto.chain.v1.CheckoutRequest;
import dev.grpcops.proto.chain.v1.EdgeGrpc;
import dev.grpcops.proto.chain.v1.StockGrpc;
import dev.grpcops.testing.RawBytes;
import io.grpc.Attributes;
import io.grpc.CallOptions;
import io.grpc.ClientCall;
import io.grpc.ClientTransportFilter;
import io.grpc.ManagedChannel;
import io.grpc.MethodDescriptor;
import io.grpc.Status;
import io.grpc.health.v1.HealthCheckRequest;
import io.grpc.health.v1.HealthCheckResponse.ServingStatus;
import io.grpc.health.v1.HealthGrpc;
import io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder;
import io.grpc.stub.ClientCalls;
import io.grpc.stub.StreamObserver;
import java.io.IOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Abuse probes, made against the jars under the pods' limits (the images' JVM options for a 512 MiB
 * limit, as {@link ServiceProcess} starts them) the way an unfriendly client would, bounded in count and
 * time: each service answers health and a normal call within seconds during and after, never
 * dies, and answers with the status the bound promises. The probes of one kind share one Stock (each
 * opens its own connections, and each leaves nothing held): a process that survived one probe must
 * survive the next.
 */
@Timeout(value = 5, unit = TimeUnit.MINUTES, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
@Order(10) // the lanes' order: junit-platform.properties
class AbuseIT {

    /**
     * What an answer "at once" may take on a loaded 2-core machine, beside another test class's
     * processes (1 s was missed there once, by Edge holding 2000 Quotes). Without the bounds the
     * probes answered after seconds, or not at all.
     */
    private static final Duration RESPONSIVE = Duration.ofSeconds(3);

    /**
     * Each probe below tests one bound alone. Fair admission (on by default, {@link OverloadIT})
     * would turn most of a 2000- or 6000-call burst from one client away with RESOURCE_EXHAUSTED
     * before it reached the bound under test, so it is off for these.
     */
    private static final String WITHOUT_ADMISSION = "--grpcops.admission.enabled=false";

    /** Stock as the pods run it. */
    private static final SharedStock STOCK = new SharedStock("stock-abused");
    /**
     * Stock for the probes of one bound alone: admission off, at most 1500 replies held, 1000 calls
     * open per connection.
     */
    private static final SharedStock BOUNDED_STOCK = new SharedStock(
            "stock-bounded",
            "--stock.max-pending-replies=1500",
            "--grpcops.server.max-concurrent-calls-per-connection=1000",
            WITHOUT_ADMISSION);

    private final List<ServiceProcess> started = new ArrayList<>();
    private final List<ManagedChannel> channels = new ArrayList<>();

    @AfterEach
    void stop() {
        channels.forEach(ManagedChannel::shutdownNow);
        ServiceProcess.stopAll(started);
    }

    @AfterAll
    static void stopShared() {
        STOCK.close();
        BOUNDED_STOCK.close();
    }

    @Test
    void madeUpMethodNamesDoNotGrowTheMetrics() throws Exception {
        ServiceProcess stock = STOCK.get();
        ManagedChannel channel = channel(stock);
        assertResponsive(stock, channel);
        int before = series(stock.metrics());

        // The probe: 400 names added 32,449 series; 3,400 ran the scrape out of memory.
        int names = 3_000;
        CountDownLatch answered = new CountDownLatch(names);
        Map<Status.Code, AtomicInteger> codes = new ConcurrentHashMap<>();
        for (int i = 0; i < names; i++) {
            MethodDescriptor<byte[], byte[]> madeUp = raw("made.up.Service" + i + "/Method" + i);
            ClientCalls.asyncUnaryCall(
                    channel.newCall(madeUp, CallOptions.DEFAULT.withDeadlineAfter(30, TimeUnit.SECONDS)),
                    new byte[0],
                    counting(codes, answered));
        }
        assertThat(answered.await(60, TimeUnit.SECONDS))
                .as("every made-up call answered")
                .isTrue();

        assertThat(codes).containsOnlyKeys(Status.Code.UNIMPLEMENTED);
        String metrics = stock.metrics();
        System.out.printf(
                "measured: %d made-up method names: %d series before, %d after%n", names, before, series(metrics));
        assertThat(series(metrics))
                .as("series after %d made-up names (before: %d)", names, before)
                .isLessThanOrEqualTo(before + 5);
        assertThat(Prometheus.sum(metrics, "grpc_server_unknown_method_calls_total"))
                .isEqualTo(names);
        assertResponsive(stock, channel);
    }

    @Test
    void undecodableRequestsAreInvalidArgumentWithoutAStackTraceEach() throws Exception {
        ServiceProcess stock = BOUNDED_STOCK.get();
        ManagedChannel channel = channel(stock);
        assertResponsive(stock, channel);

        int requests = 2_000;
        CountDownLatch answered = new CountDownLatch(requests);
        Map<Status.Code, AtomicInteger> codes = new ConcurrentHashMap<>();
        MethodDescriptor<byte[], byte[]> check = raw(StockGrpc.getCheckMethod().getFullMethodName());
        long flooding = System.nanoTime();
        for (int i = 0; i < requests; i++) {
            // Field 1 (sku) claims 127 bytes and brings 2: not a CheckRequest.
            ClientCalls.asyncUnaryCall(
                    channel.newCall(check, CallOptions.DEFAULT.withDeadlineAfter(30, TimeUnit.SECONDS)),
                    new byte[] {0x0a, 0x7f, 0x41, 0x42},
                    counting(codes, answered));
        }
        assertThat(answered.await(60, TimeUnit.SECONDS)).isTrue();
        long intervals = TimeUnit.NANOSECONDS.toSeconds(System.nanoTime() - flooding) / 10 + 1;

        assertThat(codes).containsOnlyKeys(Status.Code.INVALID_ARGUMENT);
        assertThat(Prometheus.sum(
                        stock.metrics(), "grpc_server_malformed_requests_total", "method=\"chain.v1.Stock/Check\""))
                .isEqualTo(requests);
        String log = stock.log();
        // The probe: 2,000 requests, 6.4 MB of log. Now one line per 10 s interval the flood spanned,
        // with a count (an interval may straddle the start and the end).
        assertThat(log.lines()
                        .filter(line -> line.contains("undecodable request"))
                        .count())
                .isLessThanOrEqualTo(intervals + 1);
        assertThat(log).doesNotContain("Application error processing RPC").doesNotContain("SerializingExecutor");
        assertResponsive(stock, channel);
    }

    @Test
    void heldCallsAreBoundedPerConnectionAndInAllAndMemoryComesBack() throws Exception {
        ServiceProcess stock = BOUNDED_STOCK.get();
        List<ManagedChannel> connections = List.of(channel(stock), channel(stock));
        ManagedChannel probe = channel(stock);
        assertResponsive(stock, probe);
        double heapBefore = heapAfterGc(stock);

        // The probe: 30,000 held Checks (delay 60 s, no deadline) on one connection took 160 MB.
        // One connection: at most 1000 of its calls are open on the server; the rest wait in the client.
        Map<Status.Code, AtomicInteger> first = new ConcurrentHashMap<>();
        List<ClientCall<CheckRequest, CheckReply>> calls = new ArrayList<>(hold(connections.get(0), 3_000, first));
        await().atMost(Duration.ofSeconds(60))
                .until(() -> Prometheus.sum(stock.metrics(), "stock_replies_pending") == 1000);
        assertThat(first)
                .as("nothing refused: the connection's own bound holds them back")
                .isEmpty();
        // A second connection: 500 more are held, up to stock.max-pending-replies; the rest are refused.
        Map<Status.Code, AtomicInteger> second = new ConcurrentHashMap<>();
        calls.addAll(hold(connections.get(1), 3_000, second));
        await().atMost(Duration.ofSeconds(60)).until(() -> count(second, Status.Code.RESOURCE_EXHAUSTED) == 2_500);
        assertThat(Prometheus.sum(stock.metrics(), "stock_replies_pending")).isEqualTo(1500);
        assertThat(second).containsOnlyKeys(Status.Code.RESOURCE_EXHAUSTED);
        assertResponsive(stock, probe);
        double heapHeld = heapAfterGc(stock);

        calls.forEach(call -> call.cancel("the abusive client leaves", null));
        assertThat(count(first, Status.Code.RESOURCE_EXHAUSTED)).isZero();
        await().atMost(Duration.ofSeconds(30))
                .until(() -> Prometheus.sum(stock.metrics(), "stock_replies_pending") == 0);
        double heapAfter = heapAfterGc(stock);
        System.out.printf(
                "measured: 6000 held Checks on 2 connections: 1500 held, %d refused; heap after GC %.0f MB before,"
                        + " %.0f MB held, %.0f MB after%n",
                count(second, Status.Code.RESOURCE_EXHAUSTED), heapBefore / 1e6, heapHeld / 1e6, heapAfter / 1e6);

        // Held calls cost a few KB each (3.7 KB in the probe): 1500 of them a few MB, not 160 MB.
        assertThat(heapHeld - heapBefore).as("heap held by 1500 calls, bytes").isLessThan(64 * 1024 * 1024);
        assertThat(heapAfter).as("heap after the calls are gone, vs before").isLessThan(heapBefore + 16 * 1024 * 1024);
        assertResponsive(stock, probe);
        assertThat(stock.isAlive()).isTrue();
    }

    @Test
    void rapidResetClosesTheConnection() throws Exception {
        ServiceProcess stock = STOCK.get();
        ManagedChannel probe = channel(stock);
        assertResponsive(stock, probe);
        AtomicInteger closedConnections = new AtomicInteger();
        ManagedChannel attacker = countingClosedConnections(stock, closedConnections);
        CheckRequest request =
                CheckRequest.newBuilder().setSku("reset").setDelayMs(60_000).build();
        // One connection, warm: every HEADERS below goes on it.
        StockGrpc.newBlockingStub(attacker)
                .withDeadlineAfter(10, TimeUnit.SECONDS)
                .check(CheckRequest.newBuilder().setSku("warm").build());

        // The probe: 20,000 HEADERS + RST_STREAM pairs in 2.2 s on one connection, no GOAWAY; the
        // server allows 2000 a second.
        for (int i = 0; i < 20_000; i++) {
            ClientCall<CheckRequest, CheckReply> call =
                    attacker.newCall(StockGrpc.getCheckMethod(), CallOptions.DEFAULT);
            ClientCalls.asyncUnaryCall(call, request, counting(new ConcurrentHashMap<>(), new CountDownLatch(0)));
            call.cancel("rapid reset", null);
        }

        // GOAWAY ENHANCE_YOUR_CALM: the server closed the attacker's connection.
        long flooding = System.nanoTime();
        await().atMost(Duration.ofSeconds(30)).until(() -> closedConnections.get() >= 1);
        System.out.printf(
                "measured: 20000 HEADERS+RST_STREAM pairs: connection closed by the server %d ms after the flood%n",
                Duration.ofNanos(System.nanoTime() - flooding).toMillis());
        // The calls the server took before it closed the connection went with it: none is held.
        await().atMost(Duration.ofSeconds(30))
                .until(() -> Prometheus.sum(stock.metrics(), "stock_replies_pending") == 0);
        assertResponsive(stock, probe);
        assertThat(stock.isAlive()).isTrue();
    }

    @Test
    void aClientThatCancelsEveryCallItHasOpenKeepsItsConnection() throws Exception {
        ServiceProcess stock = BOUNDED_STOCK.get();
        AtomicInteger closedConnections = new AtomicInteger();
        ManagedChannel client = countingClosedConnections(stock, closedConnections);
        assertResponsive(stock, client);

        // A caller going away, or a deadline shared by all its calls: every call open at once (the
        // connection's 1000) reset together, which the rapid-reset guard must tell from an attack.
        Map<Status.Code, AtomicInteger> codes = new ConcurrentHashMap<>();
        List<ClientCall<CheckRequest, CheckReply>> calls = hold(client, 1_000, codes);
        await().atMost(Duration.ofSeconds(60))
                .until(() -> Prometheus.sum(stock.metrics(), "stock_replies_pending") == 1000);
        calls.forEach(call -> call.cancel("the caller went away", null));
        await().atMost(Duration.ofSeconds(30))
                .until(() -> Prometheus.sum(stock.metrics(), "stock_replies_pending") == 0);

        assertResponsive(stock, client);
        assertThat(closedConnections).as("connections the server closed").hasValue(0);
        assertThat(codes).containsOnlyKeys(Status.Code.CANCELLED);
    }

    @Test
    void edgeFanOutIsBoundedAndACancellingCallerLeavesNothingBehind() throws Exception {
        ServiceProcess stock = STOCK.get();
        ServiceProcess pricing = start("pricing-service", "--grpc.client.stock.address=static://" + stock.target());
        ServiceProcess edge = start(
                "edge-service",
                "--grpc.client.pricing.address=static://" + pricing.target(),
                "--edge.max-quotes-in-flight=2000",
                WITHOUT_ADMISSION); // admission would seat 5 such Checkouts (512 seats): the bound here is Edge's own
        ManagedChannel toEdge = channel(edge);
        assertResponsive(edge, toEdge);
        double heapBefore = heapAfterGc(edge);

        // The probe: 500 Checkouts of 100 SKUs (delay 60 s), cancelled by the client: 913 full GCs,
        // SIGTERM ignored for 40 s, 44,299 downstream calls still held.
        List<ListenableFuture<CheckoutReply>> checkouts = new ArrayList<>();
        for (int i = 0; i < 200; i++) {
            CheckoutRequest.Builder request = CheckoutRequest.newBuilder().setDelayMs(60_000);
            for (int sku = 0; sku < 100; sku++) {
                request.addSkus("fan-" + i + "-" + sku);
            }
            checkouts.add(EdgeGrpc.newFutureStub(toEdge).checkout(request.build()));
        }
        await().atMost(Duration.ofSeconds(60))
                .until(() -> Prometheus.sum(edge.metrics(), "edge_quotes_in_flight") == 2000);
        assertResponsive(edge, toEdge);

        checkouts.forEach(checkout -> checkout.cancel(true));
        await().atMost(Duration.ofSeconds(30))
                .until(() -> Prometheus.sum(edge.metrics(), "edge_quotes_in_flight") == 0);
        await().atMost(Duration.ofSeconds(30))
                .until(() -> Prometheus.sum(stock.metrics(), "stock_replies_pending") == 0);
        String metrics = edge.metrics();
        assertThat(Prometheus.sum(metrics, "edge_lines_unavailable_total", "reason=\"CANCELLED\""))
                .as("the caller's own cancellation is not an unavailable line")
                .isZero();
        double heapAfter = heapAfterGc(edge);
        System.out.printf(
                "measured: 200 Checkouts x 100 SKUs, cancelled: Edge held at most 2000 Quotes;"
                        + " Edge heap after GC %.0f MB before, %.0f MB after%n",
                heapBefore / 1e6, heapAfter / 1e6);
        assertThat(heapAfter).isLessThan(heapBefore + 16 * 1024 * 1024);
        assertResponsive(edge, toEdge);

        long stopping = System.nanoTime();
        edge.terminate(Duration.ofSeconds(30));
        // Drain delay (100 ms here) and nothing left in flight: Edge does not wait out its 20 s grace
        // period (grpc.server.shutdown-grace-period), which is what the probe's held calls made it do.
        Duration stopped = Duration.ofNanos(System.nanoTime() - stopping);
        System.out.printf("measured: Edge stopped %d ms after SIGTERM%n", stopped.toMillis());
        assertThat(stopped).isLessThan(Duration.ofSeconds(20));
    }

    /** Starts {@code count} Checks of 60 s, no deadline, on {@code channel}; their outcomes go to {@code codes}. */
    private static List<ClientCall<CheckRequest, CheckReply>> hold(
            ManagedChannel channel, int count, Map<Status.Code, AtomicInteger> codes) {
        List<ClientCall<CheckRequest, CheckReply>> calls = new ArrayList<>();
        for (int i = 0; i < count; i++) {
            ClientCall<CheckRequest, CheckReply> call =
                    channel.newCall(StockGrpc.getCheckMethod(), CallOptions.DEFAULT);
            ClientCalls.asyncUnaryCall(
                    call,
                    CheckRequest.newBuilder()
                            .setSku("held-" + (i % 50))
                            .setDelayMs(60_000)
                            .build(),
                    counting(codes, new CountDownLatch(0)));
            calls.add(call);
        }
        return calls;
    }

    /** One Stock for several probes, started by the first that asks, stopped after the last. */
    private static final class SharedStock implements AutoCloseable {

        private final String name;
        private final String[] args;
        private ServiceProcess stock;

        SharedStock(String name, String... args) {
            this.name = name;
            this.args = args;
        }

        synchronized ServiceProcess get() {
            if (stock == null) {
                stock = ServiceProcess.start("stock-service", name, "127.0.0.1", Map.of(), args);
            }
            // Fails at once, naming the exit, if an earlier probe brought it down.
            return stock.awaitServing(Duration.ofSeconds(120));
        }

        @Override
        public synchronized void close() {
            if (stock != null) {
                stock.close();
                stock = null;
            }
        }
    }

    private ServiceProcess start(String module, String... args) {
        ServiceProcess service = ServiceProcess.start(module, args);
        started.add(service);
        return service.awaitServing(Duration.ofSeconds(120));
    }

    private ManagedChannel channel(ServiceProcess service) {
        ManagedChannel channel = service.channel();
        channels.add(channel);
        return channel;
    }

    /** A channel to {@code stock} that counts its connections that ended, in {@code closed}. */
    private ManagedChannel countingClosedConnections(ServiceProcess stock, AtomicInteger closed) {
        ManagedChannel channel = NettyChannelBuilder.forAddress(stock.host, stock.grpcPort)
                .usePlaintext()
                .addTransportFilter(new ClientTransportFilter() {
                    @Override
                    public void transportTerminated(Attributes transportAttrs) {
                        closed.incrementAndGet();
                    }
                })
                .build();
        channels.add(channel);
        return channel;
    }

    /** Health and a normal call, each answered within {@link #RESPONSIVE}. */
    private static void assertResponsive(ServiceProcess service, ManagedChannel channel) {
        assertThat(HealthGrpc.newBlockingStub(channel)
                        .withDeadlineAfter(RESPONSIVE.toMillis(), TimeUnit.MILLISECONDS)
                        .check(HealthCheckRequest.getDefaultInstance())
                        .getStatus())
                .isEqualTo(ServingStatus.SERVING);
        if (service.name.startsWith("stock")) {
            StockGrpc.newBlockingStub(channel)
                    .withDeadlineAfter(RESPONSIVE.toMillis(), TimeUnit.MILLISECONDS)
                    .check(CheckRequest.newBuilder().setSku("normal").build());
        } else if (service.name.startsWith("edge")) {
            EdgeGrpc.newBlockingStub(channel)
                    .withDeadlineAfter(RESPONSIVE.toMillis(), TimeUnit.MILLISECONDS)
                    .checkout(CheckoutRequest.newBuilder().addSkus("normal").build());
        }
    }

    /** Heap in use right after a full GC (jcmd GC.run), from the service's own metrics. */
    private static double heapAfterGc(ServiceProcess service) throws IOException, InterruptedException {
        Process gc = new ProcessBuilder("jcmd", Long.toString(service.pid()), "GC.run")
                .redirectErrorStream(true)
                .redirectOutput(ProcessBuilder.Redirect.DISCARD)
                .start();
        assertThat(gc.waitFor(30, TimeUnit.SECONDS)).as("jcmd GC.run").isTrue();
        return Prometheus.sum(service.metrics(), "jvm_memory_used_bytes", "area=\"heap\"");
    }

    private static int series(String metrics) {
        return (int) metrics.lines()
                .filter(line -> !line.isBlank() && !line.startsWith("#"))
                .count();
    }

    private static int count(Map<Status.Code, AtomicInteger> codes, Status.Code code) {
        AtomicInteger n = codes.get(code);
        return n == null ? 0 : n.get();
    }

    private static <T> StreamObserver<T> counting(Map<Status.Code, AtomicInteger> codes, CountDownLatch answered) {
        return new StreamObserver<>() {
            @Override
            public void onNext(T value) {}

            @Override
            public void onError(Throwable failure) {
                codes.computeIfAbsent(Status.fromThrowable(failure).getCode(), c -> new AtomicInteger())
                        .incrementAndGet();
                answered.countDown();
            }

            @Override
            public void onCompleted() {
                codes.computeIfAbsent(Status.Code.OK, c -> new AtomicInteger()).incrementAndGet();
                answered.countDown();
            }
        };
    }

    /** A method sending and receiving raw bytes: what a client that is not ours sends. */
    private static MethodDescriptor<byte[], byte[]> raw(String fullMethodName) {
        return RawBytes.unary(fullMethodName);
    }
}
