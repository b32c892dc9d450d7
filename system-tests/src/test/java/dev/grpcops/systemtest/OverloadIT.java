package dev.grpcops.systemtest;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.google.common.util.concurrent.MoreExecutors;
import dev.grpcops.proto.chain.v1.CheckoutRequest;
import dev.grpcops.proto.chain.v1.EdgeGrpc;
import io.grpc.ManagedChannel;
import io.grpc.Metadata;
import io.grpc.Status;
import io.grpc.stub.MetadataUtils;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.IntStream;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.parallel.Isolated;

/**
 * design §9 with the jars as processes at their defaults (admission on): floods of Checkouts with no
 * deadline beside a caller sending 20 Checkouts/s at a 1 s deadline. Asserted as a user checks it:
 * the polite caller's Checkouts complete within their deadline, the flood is told to back off
 * ({@code RESOURCE_EXHAUSTED}, never {@code UNAVAILABLE}), criticality caps hold, a burst adds no
 * thread per call. What each scenario measured (the polite caller's latency, rejections by reason) is
 * printed and appended to target/overload-numbers.txt; the full-size table of docs/benchmarks.md
 * comes from {@code -Doverload.seconds=30 -Doverload.inflight=5000}.
 */
@Timeout(value = 5, unit = TimeUnit.MINUTES, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
// Alone, after both lanes (@Isolated: it has no place in their order). Its polite caller's share
// is about the CPU the flood leaves it, and beside AbuseIT (87 % complete) or RetryStormIT (60 %)
// another class's processes took that CPU.
@Isolated
class OverloadIT {

    /** -Doverload.seconds=30 for the full-size runs of docs/overload.md. */
    private static final Duration POLITE_FOR = Duration.ofSeconds(Long.getLong("overload.seconds", 6));
    /**
     * -Doverload.admission=false starts the chain with admission off, to measure the "admission off"
     * column of docs/overload.md: the numbers are recorded first, then the assertions fail, as they should.
     */
    private static final String ADMISSION =
            "--grpcops.admission.enabled=" + System.getProperty("overload.admission", "true");

    private static final Duration DEADLINE = Duration.ofSeconds(1);
    /** Checkouts the floods keep in flight; -Doverload.inflight=5000 for the full-size runs. */
    private static final int FLOOD = Integer.getInteger("overload.inflight", 1000);
    /** On a loaded 2-core CI machine, where the floods, the chain and the test share the cores. */
    private static final double MIN_COMPLETE = 0.99;

    private static ServiceProcess stock;
    private static ServiceProcess pricing;
    private static ServiceProcess edge;
    private static List<ManagedChannel> floodChannels;
    private static ManagedChannel politeChannel;

    @BeforeAll
    @Timeout(value = 5, unit = TimeUnit.MINUTES, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
    static void startChain() {
        stock = ServiceProcess.start("stock-service", "stock-overload", "127.0.0.1", Map.of(), ADMISSION);
        pricing = ServiceProcess.start(
                "pricing-service",
                "pricing-overload",
                "127.0.0.1",
                Map.of(),
                "--grpc.client.stock.address=static://" + stock.target(),
                "--grpcops.admission.callers.capped.max-criticality=default",
                ADMISSION);
        edge = ServiceProcess.start(
                "edge-service",
                "edge-overload",
                "127.0.0.1",
                Map.of(),
                "--grpc.client.pricing.address=static://" + pricing.target(),
                "--grpcops.admission.callers.capped.max-criticality=default",
                ADMISSION);
        for (ServiceProcess service : List.of(stock, pricing, edge)) {
            service.awaitServing(Duration.ofSeconds(90));
        }
        // A connection carries at most 1000 calls at once (grpcops.server.max-concurrent-calls-per-connection).
        floodChannels = IntStream.range(0, Math.max(2, (FLOOD + 899) / 900))
                .mapToObj(i -> edge.channel())
                .toList();
        politeChannel = edge.channel();
        // Connections and the JIT warm up on the first calls.
        for (int i = 0; i < 200; i++) {
            EdgeGrpc.newBlockingStub(politeChannel)
                    .withDeadlineAfter(10, TimeUnit.SECONDS)
                    .checkout(CheckoutRequest.newBuilder()
                            .addSkus("warm-" + i % 7)
                            .build());
        }
    }

    @AfterAll
    @Timeout(value = 2, unit = TimeUnit.MINUTES, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
    static void stopChain() {
        Stream.concat(Stream.ofNullable(floodChannels).flatMap(List::stream), Stream.ofNullable(politeChannel))
                .forEach(ManagedChannel::shutdownNow);
        ServiceProcess.stopAll(edge, pricing, stock);
    }

    @Test
    void oneNoisyCallerCannotStarveAWellBehavedOne() throws Exception {
        scenario("1 noisy caller x " + FLOOD + " in flight", List.of("noisy"), "default", FLOOD, "default");
    }

    @Test
    void theSameFloodSplitOverEightCallersCannotEither() throws Exception {
        scenario(
                "8 noisy callers x " + FLOOD / 8 + " in flight",
                IntStream.range(0, 8).mapToObj(i -> "noisy-" + i).toList(),
                "default",
                FLOOD / 8,
                "default");
    }

    @Test
    void aSheddableFloodLeavesCriticalTrafficUnharmed() throws Exception {
        scenario(
                "sheddable flood " + FLOOD + " in flight, critical caller",
                List.of("batch"),
                "sheddable",
                FLOOD,
                "critical");
    }

    @Test
    void aCallerCappedAtDefaultThatClaimsCriticalIsTreatedAsDefault() {
        String edgeBefore = edge.metrics();
        String pricingBefore = pricing.metrics();
        Metadata headers = new Metadata();
        headers.put(Metadata.Key.of("x-grpcops-caller", Metadata.ASCII_STRING_MARSHALLER), "capped");
        headers.put(Metadata.Key.of("x-grpcops-criticality", Metadata.ASCII_STRING_MARSHALLER), "critical");
        EdgeGrpc.EdgeBlockingStub stub = EdgeGrpc.newBlockingStub(politeChannel)
                .withInterceptors(MetadataUtils.newAttachHeadersInterceptor(headers));
        for (int i = 0; i < 10; i++) {
            stub.withDeadlineAfter(5, TimeUnit.SECONDS)
                    .checkout(CheckoutRequest.newBuilder()
                            .addSkus("capped-a")
                            .addSkus("capped-b")
                            .addSkus("capped-c")
                            .build());
        }
        String edgeAfter = edge.metrics();
        String pricingAfter = pricing.metrics();
        assertThat(dispatched(edgeAfter, "critical") - dispatched(edgeBefore, "critical"))
                .isZero();
        assertThat(dispatched(edgeAfter, "default") - dispatched(edgeBefore, "default"))
                .isGreaterThanOrEqualTo(10);
        // Edge forwards the criticality it granted: Pricing sees "default" too, for all 30 Quotes.
        assertThat(dispatched(pricingAfter, "critical") - dispatched(pricingBefore, "critical"))
                .isZero();
        assertThat(dispatched(pricingAfter, "default") - dispatched(pricingBefore, "default"))
                .isGreaterThanOrEqualTo(30);
    }

    @Test
    void aBurstOf2000CallsCreatesNoThreadPerCallAndLeavesNoneBehind() throws Exception {
        int before = threads(edge);
        int peak = before;
        try (Flood burst = new Flood(floodChannels, List.of("burst"), "default", 2000)) {
            long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(5);
            while (System.nanoTime() < end) {
                peak = Math.max(peak, threads(edge));
                Thread.sleep(20); // sampling interval of the measurement, not a synchronisation
            }
            burst.close();
            await("the burst's calls to end").atMost(Duration.ofSeconds(30)).until(() -> burst.open() == 0);
            assertThat(burst.count(Status.Code.UNAVAILABLE)).isZero();
        }
        int after = threads(edge);
        record(String.format(
                java.util.Locale.ROOT,
                "burst of 2000 Checkouts in flight: Edge threads %d before, %d at peak, %d after",
                before,
                peak,
                after));
        // Handlers run on Netty's event loops (2 x cores at most); a queued call holds none.
        int bound = 2 * Runtime.getRuntime().availableProcessors();
        assertThat(peak - before).as("threads Edge added under the burst").isLessThanOrEqualTo(bound);
        assertThat(after - before).as("threads left behind").isLessThanOrEqualTo(bound);
    }

    /**
     * design §16: a caller that cancels Checkouts of 100 SKUs as fast as admission lets it in makes
     * Edge cancel thousands of Quotes a second on its connection to Pricing, past Pricing's
     * rapid-reset guard; Edge keeps the cancellations it sends within its budget (the rest end for
     * their caller at once), so Pricing never closes that connection under the polite caller's
     * Quotes: the polite caller's Checkouts are complete and no line is lost to UNAVAILABLE.
     */
    @Test
    void aCallerCancellingWideCheckoutsCannotBreakTheConnectionUnderAPoliteOne() throws Exception {
        String edgeBefore = edge.metrics();
        String pricingBefore = pricing.metrics();
        AtomicBoolean cancelling = new AtomicBoolean(true);
        AtomicInteger sent = new AtomicInteger();
        Metadata rude = new Metadata();
        rude.put(Metadata.Key.of("x-grpcops-caller", Metadata.ASCII_STRING_MARSHALLER), "canceller");
        EdgeGrpc.EdgeFutureStub stub = EdgeGrpc.newFutureStub(floodChannels.get(0))
                .withInterceptors(MetadataUtils.newAttachHeadersInterceptor(rude));
        CheckoutRequest.Builder wide = CheckoutRequest.newBuilder().setDelayMs(200);
        for (int sku = 0; sku < 100; sku++) {
            wide.addSkus("wide-" + sku);
        }
        CheckoutRequest request = wide.build();
        ScheduledExecutorService canceller = Executors.newScheduledThreadPool(1);
        Semaphore open = new Semaphore(16);
        Thread sender = new Thread(() -> {
            while (cancelling.get()) {
                try {
                    open.acquire();
                } catch (InterruptedException e) {
                    return;
                }
                var checkout = stub.withDeadlineAfter(5, TimeUnit.SECONDS).checkout(request);
                sent.incrementAndGet();
                checkout.addListener(open::release, MoreExecutors.directExecutor());
                canceller.schedule(() -> checkout.cancel(true), 20, TimeUnit.MILLISECONDS);
            }
        });
        sender.start();
        PoliteCaller.Result polite;
        try {
            polite = PoliteCaller.run(politeChannel, "polite", "default", 20, POLITE_FOR, DEADLINE, 2);
        } finally {
            cancelling.set(false);
            sender.interrupt();
            sender.join(10_000);
            canceller.shutdown();
        }
        String edgeAfter = edge.metrics();
        String pricingAfter = pricing.metrics();
        double deferred = delta(edgeBefore, edgeAfter, "grpc_client_cancellations_total", "outcome=\"deferred\"");
        double cancelsSent = delta(edgeBefore, edgeAfter, "grpc_client_cancellations_total", "outcome=\"sent\"");
        record(String.format(
                java.util.Locale.ROOT,
                "canceller (16 Checkouts of 100 SKUs open, each cancelled after 20 ms, %d sent): polite caller %s;"
                        + " Edge cancellations to Pricing sent %d, deferred %d; Edge rejected %s; Pricing: calls its callers reset %s",
                sent.get(),
                polite,
                (long) cancelsSent,
                (long) deferred,
                rejectedByReason(edgeBefore, edgeAfter),
                resetByCallers(pricingBefore, pricingAfter)));
        assertThat(polite.completeShare()).as("complete answers: " + polite).isGreaterThanOrEqualTo(MIN_COMPLETE);
        assertThat(delta(edgeBefore, edgeAfter, "edge_lines_unavailable_total", "reason=\"UNAVAILABLE\""))
                .as("lines lost to a closed connection")
                .isZero();
        assertThat(cancelsSent + deferred)
                .as("Quotes the canceller made Edge cancel")
                .isPositive();
    }

    /** The flood, the polite caller measured under it, its Checkouts complete. */
    private void scenario(
            String name, List<String> callers, String floodCriticality, int inFlight, String politeCriticality)
            throws Exception {
        PoliteCaller.Result polite = measure(name, callers, floodCriticality, inFlight, politeCriticality);
        assertThat(polite.completeShare()).as("complete answers: " + polite).isGreaterThanOrEqualTo(MIN_COMPLETE);
    }

    private PoliteCaller.Result measure(
            String name, List<String> callers, String floodCriticality, int inFlight, String politeCriticality)
            throws Exception {
        String edgeBefore = edge.metrics();
        String pricingBefore = pricing.metrics();
        String stockBefore = stock.metrics();
        PoliteCaller.Result polite;
        try (Flood flood = new Flood(floodChannels, callers, floodCriticality, inFlight)) {
            await("the flood to fill Edge")
                    .atMost(Duration.ofSeconds(30))
                    .pollInterval(Duration.ofMillis(100))
                    .until(() -> flooded(edgeBefore, edge.metrics(), inFlight * callers.size()));
            polite = PoliteCaller.run(politeChannel, "polite", politeCriticality, 20, POLITE_FOR, DEADLINE);
            flood.close();
            await("the flood's calls to end").atMost(Duration.ofSeconds(30)).until(() -> flood.open() == 0);
            String edgeAfter = edge.metrics();
            String pricingAfter = pricing.metrics();
            String stockAfter = stock.metrics();
            record(String.format(
                    java.util.Locale.ROOT,
                    "%s: polite caller (%s) %s;"
                            + " flood %s; Edge rejected %s; Edge %s; Pricing %s, rejected %s, calls its callers reset %s; Stock rejected %s",
                    name,
                    politeCriticality,
                    polite,
                    flood.statuses(),
                    rejectedByReason(edgeBefore, edgeAfter),
                    retriesAndHedges(edgeBefore, edgeAfter),
                    retriesAndHedges(pricingBefore, pricingAfter),
                    rejectedByReason(pricingBefore, pricingAfter),
                    resetByCallers(pricingBefore, pricingAfter),
                    rejectedByReason(stockBefore, stockAfter)));
            // Edge queues what its fair queues hold and refuses the rest: a flood that fits waits its
            // turn (bounded by max-wait), a larger one is also told to back off.
            double floodWaited = delta(
                    edgeBefore,
                    edgeAfter,
                    "grpc_admission_wait_seconds_sum",
                    "priority_level=\"" + floodCriticality + "\"");
            assertThat(flood.count(Status.Code.RESOURCE_EXHAUSTED) > 0 || floodWaited > 0)
                    .as(
                            "the flood is held back: told to back off, or made to wait its turn (waited %.1f s)",
                            floodWaited)
                    .isTrue();
            assertThat(flood.count(Status.Code.UNAVAILABLE))
                    .as("never UNAVAILABLE, which clients retry")
                    .isZero();
        }
        return polite;
    }

    /**
     * Admission rejects the flood, or holds it in its queues; without admission (the "before"), Edge
     * runs a thousand calls.
     */
    private static boolean flooded(String before, String now, int flood) {
        return Prometheus.sum(now, "grpc_admission_rejected_total")
                        > Prometheus.sum(before, "grpc_admission_rejected_total")
                || Prometheus.sum(now, "grpc_admission_inqueue_requests") >= 0.5 * flood
                || Prometheus.sum(now, "grpc_server_calls_in_flight") >= 0.9 * flood;
    }

    private static double dispatched(String metrics, String level) {
        return Prometheus.sum(metrics, "grpc_admission_dispatched_total", "priority_level=\"" + level + "\"");
    }

    private static String rejectedByReason(String before, String after) {
        StringBuilder text = new StringBuilder();
        for (String reason :
                List.of("queue-full", "time-out", "deadline-infeasible", "concurrency-limit", "cancelled")) {
            double count = delta(before, after, "grpc_admission_rejected_total", "reason=\"" + reason + "\"");
            text.append(reason).append('=').append((long) count).append(' ');
        }
        return text.toString().trim();
    }

    /** A hop's downstream retries and hedges by outcome, what a polite call's missing lines come from. */
    private static String retriesAndHedges(String before, String after) {
        StringBuilder text = new StringBuilder("retries");
        for (String outcome : List.of("attempted", "throttled", "refused", "pushback")) {
            text.append(' ').append(outcome).append('=').append((long)
                    delta(before, after, "grpc_budget_retries_total", "outcome=\"" + outcome + "\""));
        }
        text.append(", hedges");
        for (String outcome : List.of("sent", "won", "lost", "throttled", "refused")) {
            text.append(' ').append(outcome).append('=').append((long)
                    delta(before, after, "grpc_hedges_total", "outcome=\"" + outcome + "\""));
        }
        return text.toString();
    }

    /** Served calls that ended because the caller reset them (RST_STREAM): cancelled or past their deadline. */
    private static String resetByCallers(String before, String after) {
        StringBuilder text = new StringBuilder();
        for (String code : List.of("CANCELLED", "DEADLINE_EXCEEDED")) {
            double count = delta(
                    before, after, "grpc_server_processing_duration_seconds_count", "statusCode=\"" + code + "\"");
            text.append(code).append('=').append((long) count).append(' ');
        }
        return text.toString().trim();
    }

    /** How much the series {@code name} with {@code label} grew from {@code before} to {@code after}. */
    private static double delta(String before, String after, String name, String label) {
        return Prometheus.sum(after, name, label) - Prometheus.sum(before, name, label);
    }

    private static int threads(ServiceProcess service) throws IOException {
        for (String line : Files.readAllLines(Path.of("/proc/" + service.pid() + "/status"))) {
            if (line.startsWith("Threads:")) {
                return Integer.parseInt(line.substring("Threads:".length()).trim());
            }
        }
        throw new IllegalStateException("no thread count for " + service.pid());
    }

    private static void record(String measured) throws IOException {
        System.out.println(measured);
        Files.writeString(
                Path.of("target/overload-numbers.txt"),
                measured + System.lineSeparator(),
                StandardOpenOption.CREATE,
                StandardOpenOption.APPEND);
    }
}
