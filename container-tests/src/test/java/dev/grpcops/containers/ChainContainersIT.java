package dev.grpcops.containers;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;
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
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;
import org.junit.jupiter.api.Timeout;
import org.testcontainers.containers.GenericContainer;
import org.testcontainers.containers.Network;

/** The chain across three containers on one Docker network: design §4/§5 over real container networking. */
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
@Timeout(value = 3, unit = TimeUnit.MINUTES, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
class ChainContainersIT {

    private static Network network;
    private static GenericContainer<?> stock;
    private static GenericContainer<?> pricing;
    private static GenericContainer<?> edge;
    private static ManagedChannel toStock;
    private static ManagedChannel toPricing;
    private static ManagedChannel toEdge;

    @BeforeAll
    @Timeout(value = 10, unit = TimeUnit.MINUTES, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
    static void startChain() {
        Docker.requireEngine();
        network = Network.newNetwork();
        stock = ServiceContainers.service("stock-service", network, "stock", 50061, "chain.v1.Stock");
        pricing = ServiceContainers.service("pricing-service", network, "pricing", 50062, "chain.v1.Pricing")
                .withCommand("--grpc.client.stock.address=dns:///stock:50061");
        edge = ServiceContainers.service("edge-service", network, "edge", 50063, "chain.v1.Edge")
                .withCommand("--grpc.client.pricing.address=dns:///pricing:50062");
        try {
            // Backends first, as a rollout brings them: a service's warm-up calls its downstream for
            // real, and warms the path only when that downstream is up.
            stock.start();
            pricing.start();
            edge.start();
        } catch (RuntimeException e) {
            stopChain();
            throw e;
        }
        toStock = ServiceContainers.channel(stock, 50061);
        toPricing = ServiceContainers.channel(pricing, 50062);
        toEdge = ServiceContainers.channel(edge, 50063);
        // The three started at once: Edge's channel may have found Pricing not yet listening. Wait
        // until a Checkout goes through all three hops (and the JVMs are warm), not a fixed count.
        await("a Checkout answered through all three containers")
                .atMost(Duration.ofSeconds(90))
                .pollInterval(Duration.ofMillis(200))
                .until(() -> edge().withDeadlineAfter(10, TimeUnit.SECONDS)
                        .checkout(CheckoutRequest.newBuilder().addSkus("warm").build())
                        .getLines(0)
                        .getAvailable());
        for (int i = 0; i < 20; i++) {
            edge().withDeadlineAfter(10, TimeUnit.SECONDS)
                    .checkout(CheckoutRequest.newBuilder().addSkus("warm").build());
        }
    }

    @AfterAll
    @Timeout(value = 3, unit = TimeUnit.MINUTES, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
    static void stopChain() {
        for (ManagedChannel channel : new ManagedChannel[] {toStock, toPricing, toEdge}) {
            if (channel != null) {
                channel.shutdownNow();
            }
        }
        ServiceContainers.removeAll(network, edge, pricing, stock);
    }

    @Test
    @Order(1)
    void budgetNumbersHoldAcrossContainers() {
        PricingGrpc.newBlockingStub(toPricing)
                .withDeadlineAfter(1, TimeUnit.SECONDS)
                .quote(QuoteRequest.newBuilder().setSku("c-quote").build());
        assertThat(stats("c-quote").getReceivedDeadlineS(0)).isCloseTo(0.8, within(0.15));

        List<String> skus = List.of("c-a", "c-b", "c-c", "c-d");
        Duration delay = Duration.ofMillis(250);
        long started = System.nanoTime();
        CheckoutReply reply = edge().withDeadlineAfter(1200, TimeUnit.MILLISECONDS)
                .checkout(CheckoutRequest.newBuilder()
                        .addAllSkus(skus)
                        .setDelayMs((int) delay.toMillis())
                        .build());
        // One after another takes at least 4 x 250 ms at Stock alone; at once, 250 ms plus the hops.
        // The sequential floor is the bound: 750 ms of room for container networking on a loaded machine.
        assertThat(Duration.ofNanos(System.nanoTime() - started))
                .as("parallel fan-out")
                .isLessThan(delay.multipliedBy(skus.size()));
        assertThat(reply.getLinesList()).allMatch(Line::getAvailable);
        for (String sku : skus) {
            assertThat(stats(sku).getReceivedDeadlineS(0)).isCloseTo(0.8, within(0.15));
        }

        CheckoutReply partial = edge().withDeadlineAfter(1, TimeUnit.SECONDS)
                .checkout(CheckoutRequest.newBuilder()
                        .addSkus("c-x")
                        .addSkus("c-slow")
                        .addSkus("c-y")
                        .addSlowSkus("c-slow")
                        .build());
        assertThat(partial.getLinesList()).extracting(Line::getAvailable).containsExactly(true, false, true);

        assertThat(edge().withDeadlineAfter(1500, TimeUnit.MILLISECONDS)
                        .checkout(
                                CheckoutRequest.newBuilder().addSkus("flaky-c1").build())
                        .getLines(0)
                        .getAvailable())
                .isTrue();
        assertThat(stats("flaky-c1").getCalls()).isEqualTo(2);
        assertThat(edge().withDeadlineAfter(800, TimeUnit.MILLISECONDS)
                        .checkout(
                                CheckoutRequest.newBuilder().addSkus("flaky-c2").build())
                        .getLines(0)
                        .getReason())
                .isEqualTo("UNAVAILABLE");
    }

    @Test
    @Order(2)
    void stockStoppedCostsLinesNotTheAnswerAndComesBack() {
        var docker = stock.getDockerClient();
        docker.stopContainerCmd(stock.getContainerId()).withTimeout(30).exec();

        // A reply at all is within the 1 s deadline: the stopped downstream costs the lines, not the answer.
        CheckoutReply down = edge().withDeadlineAfter(1, TimeUnit.SECONDS)
                .checkout(CheckoutRequest.newBuilder()
                        .addSkus("down-a")
                        .addSkus("down-b")
                        .build());
        assertThat(down.getLinesList()).extracting(Line::getAvailable).containsOnly(false);
        assertThat(down.getLinesList()).extracting(Line::getReason).isSubsetOf("UNAVAILABLE", "DEADLINE_EXCEEDED");

        docker.startContainerCmd(stock.getContainerId()).exec();
        await().atMost(Duration.ofMinutes(2))
                .pollInterval(Duration.ofMillis(500))
                .untilAsserted(() -> assertThat(edge().withDeadlineAfter(2, TimeUnit.SECONDS)
                                .checkout(CheckoutRequest.newBuilder()
                                        .addSkus("back-a")
                                        .build())
                                .getLines(0)
                                .getAvailable())
                        .isTrue());
    }

    private static SkuStats stats(String sku) {
        return StockGrpc.newBlockingStub(toStock)
                .withDeadlineAfter(5, TimeUnit.SECONDS)
                .stats(StatsRequest.newBuilder().setSku(sku).build())
                .getSkus(0);
    }

    private static EdgeGrpc.EdgeBlockingStub edge() {
        return EdgeGrpc.newBlockingStub(toEdge);
    }
}
