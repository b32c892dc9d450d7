package dev.grpcops.containers;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.grpcops.proto.chain.v1.CheckoutReply;
import dev.grpcops.proto.chain.v1.CheckoutRequest;
import dev.grpcops.proto.chain.v1.EdgeGrpc;
import dev.grpcops.proto.chain.v1.Line;
import dev.grpcops.proto.chain.v1.PricingGrpc;
import dev.grpcops.proto.chain.v1.QuoteRequest;
import dev.grpcops.proto.chain.v1.SkuStats;
import dev.grpcops.proto.chain.v1.StatsRequest;
import dev.grpcops.proto.chain.v1.StockGrpc;
import io.grpc.ManagedChannel;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * The chain across the Compose suite's containers (design §4/§5 over real container networking and
 * Docker's DNS aliases): what Stock received, a fan-out within one deadline, partial answers, and
 * every Stock replica stopped and started again.
 */
@ExtendWith(ComposeSuite.Resolver.class)
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
@Timeout(value = 3, unit = TimeUnit.MINUTES, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
class ChainContainersIT {

    private static final String[] STOCK = {"stock-1", "stock-2", "stock-3"};

    private static ComposeSuite suite;
    private static final List<ManagedChannel> toStock = new ArrayList<>();
    private static ManagedChannel toPricing;
    private static ManagedChannel toEdge;

    @BeforeAll
    @Timeout(value = 12, unit = TimeUnit.MINUTES, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
    static void connect(ComposeSuite compose) {
        suite = compose;
        for (String stock : STOCK) {
            toStock.add(suite.channel(stock, 50061));
        }
        toPricing = suite.channel("pricing-1", 50062);
        toEdge = suite.channel("edge", 50063);
        await("a Checkout answered through the containers")
                .atMost(Duration.ofSeconds(90))
                .pollInterval(Duration.ofMillis(200))
                .ignoreExceptions()
                .until(() -> edge().withDeadlineAfter(10, TimeUnit.SECONDS)
                        .checkout(CheckoutRequest.newBuilder().addSkus("warm").build())
                        .getLines(0)
                        .getAvailable());
        // Through Edge, both Pricing replicas (pricing-2 publishes no port) and every Stock replica:
        // their paths compile here, not in the fan-out below, whose lines each have a budget to meet.
        for (int i = 0; i < 20; i++) {
            edge().withDeadlineAfter(10, TimeUnit.SECONDS)
                    .checkout(CheckoutRequest.newBuilder()
                            .addAllSkus(List.of("warm-a", "warm-b", "warm-c", "warm-d"))
                            .build());
        }
        // pricing-1, asked directly below, warmed on its own: its connections to the Stock replicas
        // open and its path compiles here, not in the first Quote whose budget is read.
        for (int i = 0; i < 20; i++) {
            PricingGrpc.newBlockingStub(toPricing)
                    .withDeadlineAfter(10, TimeUnit.SECONDS)
                    .quote(QuoteRequest.newBuilder().setSku("warm-" + i % 5).build());
        }
    }

    @AfterAll
    static void disconnect() {
        toStock.forEach(ManagedChannel::shutdownNow);
        toStock.clear();
        for (ManagedChannel channel : new ManagedChannel[] {toPricing, toEdge}) {
            if (channel != null) {
                channel.shutdownNow();
            }
        }
    }

    @Test
    @Order(1)
    void budgetNumbersHoldAcrossContainers() {
        PricingGrpc.newBlockingStub(toPricing)
                .withDeadlineAfter(1, TimeUnit.SECONDS)
                .quote(QuoteRequest.newBuilder().setSku("c-quote").build());
        // A budget only shrinks on its way: at most 1 s less Pricing's 0.2 s reserve.
        assertFirstAttemptWithin("c-quote", 0.5, 0.8);

        // Four SKUs of 250 ms each in a 1 s deadline: quoted one after another they could not all be
        // answered (Stock alone would take the whole second); at once, each within its budget.
        List<String> skus = List.of("c-a", "c-b", "c-c", "c-d");
        CheckoutReply reply = edge().withDeadlineAfter(1, TimeUnit.SECONDS)
                .checkout(CheckoutRequest.newBuilder()
                        .addAllSkus(skus)
                        .setDelayMs(250)
                        .build());
        assertThat(reply.getLinesList()).as("parallel fan-out").allMatch(Line::getAvailable);
        for (String sku : skus) {
            assertFirstAttemptWithin(sku, 0.3, 0.6);
        }

        CheckoutReply partial = edge().withDeadlineAfter(1, TimeUnit.SECONDS)
                .checkout(CheckoutRequest.newBuilder()
                        .addSkus("c-x")
                        .addSkus("c-slow")
                        .addSkus("c-y")
                        .addSlowSkus("c-slow")
                        .build());
        assertThat(partial.getLinesList()).extracting(Line::getAvailable).containsExactly(true, false, true);
    }

    @Test
    @Order(2)
    void everyStockReplicaStoppedCostsLinesNotTheAnswerAndTheyComeBack() {
        suite.stop(STOCK);
        try {
            // A reply at all is within the 1 s deadline: the stopped downstream costs the lines, not the answer.
            CheckoutReply down = edge().withDeadlineAfter(1, TimeUnit.SECONDS)
                    .checkout(CheckoutRequest.newBuilder()
                            .addSkus("down-a")
                            .addSkus("down-b")
                            .build());
            assertThat(down.getLinesList()).extracting(Line::getAvailable).containsOnly(false);
            assertThat(down.getLinesList()).extracting(Line::getReason).isSubsetOf("UNAVAILABLE", "DEADLINE_EXCEEDED");
        } finally {
            suite.start(STOCK);
        }
        await().atMost(Duration.ofMinutes(2))
                .pollInterval(Duration.ofMillis(500))
                .ignoreExceptions()
                .untilAsserted(() -> assertThat(edge().withDeadlineAfter(2, TimeUnit.SECONDS)
                                .checkout(CheckoutRequest.newBuilder()
                                        .addSkus("back-a")
                                        .build())
                                .getLines(0)
                                .getAvailable())
                        .isTrue());
    }

    /**
     * The first Check for {@code sku} arrived with a deadline within the bounds. Pricing hedges
     * {@code Check} (design §13) once the container's answers set a hedge delay, so a second Check
     * may follow on another replica; it left later, so it carries less.
     */
    private static void assertFirstAttemptWithin(String sku, double low, double high) {
        List<Double> deadlines = received(sku);
        deadlines.sort(Comparator.reverseOrder());
        assertThat(deadlines).as("deadlines %s's Checks arrived with", sku).hasSizeBetween(1, 2);
        assertThat(deadlines.get(0)).as("the first attempt's").isBetween(low, high);
    }

    /** The deadlines {@code sku}'s Checks arrived with, in seconds, at whichever Stock replica took them. */
    private static List<Double> received(String sku) {
        List<Double> deadlines = new ArrayList<>();
        for (ManagedChannel stock : toStock) {
            for (SkuStats stats : StockGrpc.newBlockingStub(stock)
                    .withDeadlineAfter(5, TimeUnit.SECONDS)
                    .stats(StatsRequest.newBuilder().setSku(sku).build())
                    .getSkusList()) {
                deadlines.addAll(stats.getReceivedDeadlineSList());
            }
        }
        return deadlines;
    }

    private static EdgeGrpc.EdgeBlockingStub edge() {
        return EdgeGrpc.newBlockingStub(toEdge);
    }
}
