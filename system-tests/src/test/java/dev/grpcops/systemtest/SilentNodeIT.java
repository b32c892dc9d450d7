package dev.grpcops.systemtest;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.grpcops.proto.chain.v1.StatsReply;
import dev.grpcops.proto.chain.v1.StatsRequest;
import dev.grpcops.proto.chain.v1.StockGrpc;
import io.grpc.ManagedChannel;
import io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.parallel.Isolated;

/**
 * A replica whose node goes silent (its packets dropped: no FIN, no RST) is absorbed, with real
 * network faults and the services' defaults: the silent replicas run in network namespaces of their
 * own ({@link NetworkNamespace}), Checkouts of 5 SKUs with a 1 s deadline come at a steady rate.
 * Checked as a user would: complete Checkouts, which Stock replica served which Checks (Stock's
 * Stats for the SKUs each stretch of Checkouts sent), and how soon the replica answers again once
 * its network returns. Three stretches: a Stock address listed from the start that never answers
 * (its SYNs dropped); one Stock replica of three silent for 30 s, then healed; one Pricing replica of
 * two silent behind Edge, then healed.
 *
 * <p>The chain: Stock {@code s1} and {@code s2}, and Pricing {@code p1}, on the host's end of the
 * Pricing namespace's veth (reachable from the host and from inside that namespace alike); Stock
 * {@code s3} in a namespace of its own; Pricing {@code p2} in the other, calling {@code s1} and
 * {@code s2}; Edge on loopback, calling {@code p1} and {@code p2}.
 *
 * <p>What finds the silent connection: client keepalive, on by default (10 s, 5 s), which on Linux
 * also sets TCP_USER_TIMEOUT, so the kernel closes a connection whose writes go unacknowledged for
 * 5 s and ends each connection attempt to the silent address as soon. Meanwhile the balancer has
 * left the replica: its cost is how long it has left calls unanswered. What brings it back: its
 * reconnect backoff cut while it is unreachable (the reconnect nudger). Latency percentiles are
 * printed, never asserted: the benchmark's ({@code scripts/bench-silent.sh}).
 *
 * <p>Root only (namespaces, veth, iptables): skipped otherwise. Namespaces left by a killed run are
 * removed first; this run's are removed in {@link #stopAll}, and at the latest when the JVM exits.
 */
// Alone, after both lanes (@Isolated), as OverloadIT: its Checkouts' completeness at a 1 s deadline is
// about the silent replica, not a neighbour's load; beside AbuseIT's floods at the start of a run, 7 of
// 400 Checkouts once timed out (the slow returns once seen beside other classes were the balancer's).
@Isolated
@Timeout(value = 6, unit = TimeUnit.MINUTES, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class SilentNodeIT {

    private static final int RATE = Integer.getInteger("silent.rate", 40);
    private static final int SKUS = 5;
    private static final Duration DEADLINE = Duration.ofSeconds(1);
    private static final Duration ROUND = Duration.ofSeconds(1);
    private static final Duration STOCK_SILENCE = Duration.ofSeconds(30);
    private static final Duration PRICING_SILENCE = Duration.ofSeconds(15);
    /**
     * How long a silent replica's connection may stay in use: the keepalive timeout (5 s, which
     * TCP_USER_TIMEOUT follows) after the first write it does not acknowledge, and a loaded machine's slack.
     */
    private static final Duration FOUND_OUT = Duration.ofSeconds(10);
    /** Serving again within this after the network returns (measured: about 1 s). */
    private static final Duration BACK_WITHIN = Duration.ofSeconds(10);
    /** How long to keep looking for a replica that is not back within {@link #BACK_WITHIN}, to say by how much. */
    private static final Duration GIVE_UP = Duration.ofSeconds(60);

    private static NetworkNamespace stockNode;
    private static NetworkNamespace pricingNode;
    private static ServiceProcess s1;
    private static ServiceProcess s2;
    private static ServiceProcess s3;
    private static ServiceProcess p1;
    private static ServiceProcess p2;
    private static ServiceProcess edge;
    private static ManagedChannel toEdge;

    @BeforeAll
    @Timeout(value = 4, unit = TimeUnit.MINUTES, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
    static void startChain() {
        NetworkNamespace.requireRoot();
        NetworkNamespace.removeLeftovers();
        stockNode = NetworkNamespace.create("s3");
        pricingNode = NetworkNamespace.create("p2");
        String shared = pricingNode.hostAddress;
        s1 = ServiceProcess.start("stock-service", "silent-s1", shared, Map.of());
        s2 = ServiceProcess.start("stock-service", "silent-s2", shared, Map.of());
        s3 = ServiceProcess.startIn(stockNode, "stock-service", "silent-s3", 50061, Map.of());
        for (ServiceProcess stock : List.of(s1, s2, s3)) {
            stock.awaitServing(Duration.ofSeconds(120));
        }
        stockNode.dropNewConnections(); // the first stretch: s3 listed, never answering
        p1 = ServiceProcess.start(
                "pricing-service",
                "silent-p1",
                shared,
                Map.of(),
                // Its subchannels' states in its log: a slow return says what held s3 back.
                "--logging.level.io.grpc.ChannelLogger=TRACE",
                "--grpc.client.stock.address=list:///" + s1.target() + "," + s2.target() + "," + s3.target());
        p2 = ServiceProcess.startIn(
                pricingNode,
                "pricing-service",
                "silent-p2",
                50062,
                Map.of(),
                "--grpc.client.stock.address=list:///" + s1.target() + "," + s2.target());
        p1.awaitServing(Duration.ofSeconds(120));
        p2.awaitServing(Duration.ofSeconds(120));
        edge = ServiceProcess.start(
                "edge-service",
                "silent-edge",
                "127.0.0.1",
                Map.of(),
                "--grpc.client.pricing.address=list:///" + p1.target() + "," + p2.target());
        edge.awaitServing(Duration.ofSeconds(120));
        toEdge = edge.channel();
        AtomicInteger round = new AtomicInteger();
        await("a round of Checkouts all complete")
                .atMost(Duration.ofSeconds(90))
                .pollDelay(Duration.ZERO)
                .pollInterval(Duration.ofMillis(1))
                .until(() -> PoliteCaller.run(
                                        toEdge,
                                        "warm-" + round.incrementAndGet(),
                                        "default",
                                        RATE,
                                        ROUND,
                                        DEADLINE,
                                        SKUS)
                                .completeShare()
                        == 1.0);
    }

    @AfterAll
    @Timeout(value = 2, unit = TimeUnit.MINUTES, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
    static void stopAll() {
        // Healed first: a silent process's drain would wait out its grace for calls it cannot end.
        for (NetworkNamespace node : Arrays.asList(stockNode, pricingNode)) {
            if (node != null) {
                node.heal();
            }
        }
        try {
            if (toEdge != null) {
                toEdge.shutdownNow();
            }
            ServiceProcess.stopAll(edge, p1, p2, s1, s2, s3);
        } finally {
            for (NetworkNamespace node : Arrays.asList(stockNode, pricingNode)) {
                if (node != null) {
                    node.close();
                }
            }
        }
    }

    @Test
    @Order(1)
    void anAddressListedButNeverAnsweringCostsNoCheckout() throws InterruptedException {
        PoliteCaller.Result listed =
                PoliteCaller.run(toEdge, "listed", "default", RATE, Duration.ofSeconds(10), DEADLINE, SKUS);
        stockNode.heal();
        Duration back = untilCheckedOn(s3.target(), "listed-back", System.nanoTime());
        System.out.printf(
                Locale.ROOT,
                "silent-node: s3 listed, its SYNs dropped: %s; s3 answered Checks %d ms after its SYNs got through%n",
                listed,
                back.toMillis());

        assertThat(listed.completeShare())
                .as("complete Checkouts while s3 never answered: %s", listed)
                .isEqualTo(1.0);
        assertThat(checks(s3.target(), "listed"))
                .as("Checks of those Checkouts s3 served")
                .isZero();
        assertThat(checks(s1.target(), "listed") + checks(s2.target(), "listed"))
                .as("Checks of those Checkouts s1 and s2 served")
                .isGreaterThan(0);
        assertThat(back)
                .as(
                        "s3 answering Checks after its SYNs got through (%s; p1's connections to s3 lately: %s)",
                        ejections(), connectionsTo(s3))
                .isLessThanOrEqualTo(BACK_WITHIN);
    }

    @Test
    @Order(2)
    void aSilentStockReplicaCostsNoCheckoutAndServesSoonAfterItsNetworkReturns() throws InterruptedException {
        stockNode.heal(); // however the test before ended
        untilCheckedOn(s3.target(), "before", System.nanoTime());
        PoliteCaller.Result healthy =
                PoliteCaller.run(toEdge, "healthy", "default", RATE, Duration.ofSeconds(5), DEADLINE, SKUS);

        stockNode.silence();
        PoliteCaller.Result onset = PoliteCaller.run(toEdge, "onset", "default", RATE, FOUND_OUT, DEADLINE, SKUS);
        PoliteCaller.Result silent =
                PoliteCaller.run(toEdge, "silent", "default", RATE, STOCK_SILENCE.minus(FOUND_OUT), DEADLINE, SKUS);
        stockNode.heal();
        Map<String, Double> atHeal = balancing();
        String healedAt = java.time.LocalTime.now(java.time.ZoneOffset.UTC).toString();
        Duration back = untilCheckedOn(s3.target(), "back", System.nanoTime());
        String meanwhile = "healed at " + healedAt + " UTC; meanwhile " + since(atHeal)
                + "; p1's connections to s3 lately: " + connectionsTo(s3);
        System.out.printf(
                Locale.ROOT,
                "silent-node: Stock s3 silent %d s: healthy %s; silent %s (first %d s %s; rest %s); s3 answered"
                        + " Checks %d ms after its network returned; %s%n",
                STOCK_SILENCE.toSeconds(),
                healthy,
                PoliteCaller.Result.together(onset, silent),
                FOUND_OUT.toSeconds(),
                onset,
                silent,
                back.toMillis(),
                ejections() + "; " + meanwhile);

        assertThat(completeShare(onset, silent))
                .as("complete Checkouts while s3 was silent: %s, then %s", onset, silent)
                .isGreaterThanOrEqualTo(0.999);
        // Its connection closed, s3 is out of the pick. Kept open (no keepalive), Pricing would go on
        // sending it probes, held in the kernel and served, stale, 20-40 s after its network returned.
        assertThat(checks(s3.target(), "silent"))
                .as("Checks s3 served of the Checkouts sent once its silence was found out")
                .isZero();
        assertThat(checks(s1.target(), "silent") + checks(s2.target(), "silent"))
                .as("Checks of those Checkouts s1 and s2 served")
                .isGreaterThan(0);
        assertThat(back)
                .as("s3 answering Checks after its network returned (%s; %s)", ejections(), meanwhile)
                .isLessThanOrEqualTo(BACK_WITHIN);
    }

    @Test
    @Order(3)
    void aSilentPricingReplicaBehindEdgeCostsNoCheckoutAndQuotesSoonAfter() throws InterruptedException {
        AtomicInteger warm = new AtomicInteger();
        await("both Pricing replicas quoting")
                .atMost(Duration.ofSeconds(60))
                .pollDelay(Duration.ZERO)
                .pollInterval(Duration.ofMillis(1))
                .until(() -> {
                    double before = quotes(p2);
                    PoliteCaller.run(toEdge, "pwarm-" + warm.incrementAndGet(), "default", RATE, ROUND, DEADLINE, SKUS);
                    return quotes(p2) > before;
                });
        PoliteCaller.Result healthy =
                PoliteCaller.run(toEdge, "phealthy", "default", RATE, Duration.ofSeconds(5), DEADLINE, SKUS);

        pricingNode.silence();
        PoliteCaller.Result silent =
                PoliteCaller.run(toEdge, "psilent", "default", RATE, PRICING_SILENCE, DEADLINE, SKUS);
        pricingNode.heal();
        long healed = System.nanoTime();
        double before = quotes(p2);
        AtomicInteger round = new AtomicInteger();
        await("p2 quoting again")
                .atMost(GIVE_UP)
                .pollDelay(Duration.ZERO)
                .pollInterval(Duration.ofMillis(1))
                .until(() -> {
                    PoliteCaller.run(
                            toEdge, "pback-" + round.incrementAndGet(), "default", RATE, ROUND, DEADLINE, SKUS);
                    return quotes(p2) > before;
                });
        Duration back = Duration.ofNanos(System.nanoTime() - healed);
        System.out.printf(
                Locale.ROOT,
                "silent-node: Pricing p2 silent %d s: healthy %s; silent %s; p2 quoted %d ms after its network"
                        + " returned%n",
                PRICING_SILENCE.toSeconds(),
                healthy,
                silent,
                back.toMillis());

        assertThat(silent.completeShare())
                .as("complete Checkouts while p2 was silent: %s", silent)
                .isGreaterThanOrEqualTo(0.999);
        assertThat(back).as("p2 quoting after its network returned").isLessThanOrEqualTo(BACK_WITHIN);
    }

    /**
     * What decides whether a Check reaches s3, counted so far: Quotes p1 (the Pricing with s3)
     * served, and the picks of Edge's and p1's balancers, for a failure's message.
     */
    private static Map<String, Double> balancing() {
        Map<String, Double> counted = new java.util.LinkedHashMap<>();
        counted.put("p1 Quotes", quotes(p1));
        for (var channel : List.of(Map.entry(edge, "pricing"), Map.entry(p1, "stock"))) {
            String metrics = channel.getKey().metrics();
            String owner = channel.getKey() == edge ? "Edge" : "p1";
            String label = "channel=\"" + channel.getValue() + "\"";
            counted.put(owner + " probes", Prometheus.sum(metrics, "grpc_client_probes_total", label));
            counted.put(owner + " slow starts", Prometheus.sum(metrics, "grpc_client_slow_starts_total", label));
            counted.put(
                    owner + " picks passed over for latency",
                    Prometheus.sum(metrics, "grpc_client_picks_passed_over_total", label, "reason=\"latency\""));
            counted.put(
                    owner + " picks passed over for the deadline",
                    Prometheus.sum(metrics, "grpc_client_picks_passed_over_total", label, "reason=\"deadline\""));
        }
        return counted;
    }

    /** How much each of {@link #balancing()}'s counts grew since {@code before}. */
    private static String since(Map<String, Double> before) {
        StringBuilder said = new StringBuilder();
        balancing()
                .forEach((name, now) -> said.append(said.length() == 0 ? "" : ", ")
                        .append(name)
                        .append(' ')
                        .append(String.format(Locale.ROOT, "%.0f", now - before.get(name))));
        return said.toString();
    }

    /**
     * The last state changes of p1's connections to {@code stock}, from its log: time and what gRPC
     * said. A subchannel's log name carries the channel's authority, not its address: its
     * transports' lines tell which subchannels are {@code stock}'s.
     */
    private static String connectionsTo(ServiceProcess stock) {
        List<String> lines =
                p1.log().lines().filter(line -> line.contains("[Subchannel<")).toList();
        java.util.Set<String> ids = new java.util.HashSet<>();
        for (String line : lines) {
            if (line.contains("(/" + stock.target() + ")")) {
                ids.add(line.substring(
                        line.indexOf("[Subchannel<"), line.indexOf('>', line.indexOf("[Subchannel<")) + 1));
            }
        }
        List<String> story = lines.stream()
                .filter(line -> ids.stream().anyMatch(line::contains))
                .map(line -> line.substring(11, 23) + " "
                        + abbreviate(line.substring(line.indexOf(")] ") + 3).replaceAll("\\s+", " ")))
                .toList();
        return String.join(" | ", story.subList(Math.max(0, story.size() - 12), story.size()));
    }

    private static String abbreviate(String said) {
        return said.length() <= 120 ? said : said.substring(0, 117) + "...";
    }

    /** Quotes {@code pricing} has served so far. */
    private static double quotes(ServiceProcess pricing) {
        return Prometheus.sum(pricing.metrics(), "grpc_server_processing_duration_seconds_count", "method=\"Quote\"");
    }

    /**
     * What each Pricing's outlier detection did to the Stock replicas so far, for a failure's
     * message: a replica ejected during its silence can stay out after its network returns.
     */
    private static String ejections() {
        StringBuilder said = new StringBuilder("Pricing's Stock ejections so far");
        for (ServiceProcess pricing : List.of(p1, p2)) {
            String metrics = pricing.metrics();
            said.append(String.format(
                    Locale.ROOT,
                    "; %s: %.0f, out now %.0f",
                    pricing.target(),
                    Prometheus.sum(metrics, "grpc_client_ejections_total", "channel=\"stock\""),
                    Prometheus.sum(metrics, "grpc_client_ejected_replicas", "channel=\"stock\"")));
        }
        return said.toString();
    }

    /**
     * Rounds of Checkouts until the Stock replica at {@code target} serves Checks of one; the time
     * from {@code sinceNanos} to the end of that round (an upper bound, by a round's length at most).
     */
    private static Duration untilCheckedOn(String target, String name, long sinceNanos) {
        AtomicInteger round = new AtomicInteger();
        await(target + " answering Checks")
                .atMost(GIVE_UP)
                .pollDelay(Duration.ZERO)
                .pollInterval(Duration.ofMillis(1))
                .until(() -> {
                    String caller = name + "-" + round.incrementAndGet();
                    PoliteCaller.run(toEdge, caller, "default", RATE, ROUND, DEADLINE, SKUS);
                    return checks(target, caller) > 0;
                });
        return Duration.ofNanos(System.nanoTime() - sinceNanos);
    }

    /**
     * Checks the Stock replica at {@code target} served of the Checkouts {@link PoliteCaller} sent as
     * {@code caller}, from its Stats, through a channel of its own.
     */
    private static long checks(String target, String caller) {
        ManagedChannel direct =
                NettyChannelBuilder.forTarget(target).usePlaintext().build();
        try {
            StockGrpc.StockBlockingStub stock = StockGrpc.newBlockingStub(direct);
            long calls = 0;
            for (String sku : skusOf(caller)) {
                StatsReply reply = stock.withDeadlineAfter(5, TimeUnit.SECONDS)
                        .stats(StatsRequest.newBuilder().setSku(sku).build());
                calls += reply.getSkusCount() == 0 ? 0 : reply.getSkus(0).getCalls();
            }
            return calls;
        } finally {
            direct.shutdownNow();
        }
    }

    /** What {@link PoliteCaller} sends as {@code caller}: caller-0 to -6 as the first line, caller-b, -c, ... after. */
    private static List<String> skusOf(String caller) {
        List<String> skus = new ArrayList<>();
        for (int n = 0; n < 7; n++) {
            skus.add(caller + "-" + n);
        }
        for (int sku = 1; sku < SKUS; sku++) {
            skus.add(caller + "-" + (char) ('a' + sku));
        }
        return skus;
    }

    private static double completeShare(PoliteCaller.Result... results) {
        int sent = Arrays.stream(results).mapToInt(PoliteCaller.Result::sent).sum();
        int complete =
                Arrays.stream(results).mapToInt(PoliteCaller.Result::complete).sum();
        return sent == 0 ? 0 : (double) complete / sent;
    }
}
