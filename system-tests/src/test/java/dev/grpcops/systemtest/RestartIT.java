package dev.grpcops.systemtest;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.google.common.util.concurrent.ListenableFuture;
import dev.grpcops.proto.chain.v1.CheckReply;
import dev.grpcops.proto.chain.v1.CheckRequest;
import dev.grpcops.proto.chain.v1.CheckoutReply;
import dev.grpcops.proto.chain.v1.CheckoutRequest;
import dev.grpcops.proto.chain.v1.EdgeGrpc;
import dev.grpcops.proto.chain.v1.Line;
import dev.grpcops.proto.chain.v1.PricingGrpc;
import dev.grpcops.proto.chain.v1.QuoteRequest;
import dev.grpcops.proto.chain.v1.StatsRequest;
import dev.grpcops.proto.chain.v1.StockGrpc;
import io.grpc.ManagedChannel;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * design §10: restarts of Stock under steady load ({@link WhoAmIRestartIT} restarts WhoAmI). Every
 * replica drains before it stops (NOT_SERVING, wait, GOAWAY, finish calls in flight);
 * health-checking clients move away in time.
 * Measured numbers are appended to target/restart-numbers.txt (quoted in docs/operations.md,
 * "Restarting without dropping calls", and design §10).
 */
@Timeout(value = 5, unit = TimeUnit.MINUTES, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
@Order(1) // the lanes' order: junit-platform.properties
class RestartIT {

    static final Duration DRAIN = Duration.ofSeconds(1);

    /**
     * A rolling restart of three Stock replicas under Quote load fails no Quote; then, in the same
     * processes, a SIGKILL of one fails only the calls in flight on its connection.
     */
    @Test
    void rollingRestartOfStockFailsNoQuoteAndSigkillOnlyTheCallsInFlight() throws Exception {
        try (Replicas stocks = Replicas.stock("--grpcops.shutdown.drain-delay=" + DRAIN.toMillis() + "ms");
                ServiceProcess pricing = pricingBehind(stocks)) {
            ManagedChannel channel = pricing.channel();
            try {
                try (SteadyLoad load = quoteLoad(channel, "rolling")) {
                    for (ServiceProcess stock : stocks.pods) {
                        restart(stock);
                        awaitTraffic(stock, "rolling");
                    }
                    load.close();

                    record("rolling restart of 3 Stock replicas: " + load.succeeded() + " Quotes, " + load.failedCount()
                            + " failed");
                    assertThat(load.failures()).as("failed Quotes").isEmpty();
                    assertThat(load.succeeded()).isPositive();
                    assertThat(stocks.pods.get(0).log())
                            .contains(
                                    "drain: health NOT_SERVING",
                                    "drain: no new calls (GOAWAY)",
                                    "drain: stopped; every call in flight finished");
                }
                sigkillFailsOnlyTheCallsInFlightAndTheNextCallsGoElsewhere(stocks, channel);
            } finally {
                channel.shutdownNow();
            }
        }
    }

    @Test
    void callInFlightWhenSigtermArrivesCompletes() throws Exception {
        Duration drain = Duration.ofMillis(500);
        Duration grace = Duration.ofSeconds(20);
        Duration callTakes = Duration.ofSeconds(2);
        try (ServiceProcess stock = ServiceProcess.start(
                "stock-service",
                "--grpcops.shutdown.drain-delay=" + drain.toMillis() + "ms",
                "--grpc.server.shutdown-grace-period=" + grace.toSeconds() + "s")) {
            stock.awaitServing(Duration.ofSeconds(90));
            ManagedChannel channel = stock.channel();
            try {
                long sent = System.nanoTime();
                ListenableFuture<CheckReply> slow = StockGrpc.newFutureStub(channel)
                        .withDeadlineAfter(30, TimeUnit.SECONDS)
                        .check(CheckRequest.newBuilder()
                                .setSku("in-flight")
                                .setDelayMs((int) callTakes.toMillis())
                                .build());
                // In flight once Stock has recorded it (it records on arrival, then holds the reply).
                StockGrpc.StockBlockingStub stats = StockGrpc.newBlockingStub(channel);
                await().atMost(Duration.ofSeconds(10))
                        .pollInterval(Duration.ofMillis(20))
                        .until(() -> stats.withDeadlineAfter(2, TimeUnit.SECONDS)
                                        .stats(StatsRequest.newBuilder()
                                                .setSku("in-flight")
                                                .build())
                                        .getSkus(0)
                                        .getCalls()
                                == 1);
                assertThat(slow).as("still in flight at SIGTERM").isNotDone();
                long sigterm = System.nanoTime();
                stock.terminate(Duration.ofSeconds(60));
                Duration stopping = Duration.ofNanos(System.nanoTime() - sigterm);

                assertThat(slow.get(5, TimeUnit.SECONDS).getSku()).isEqualTo("in-flight");
                // Stock answers callTakes after the call arrived, which is after it was sent: the process
                // cannot have exited before sent + callTakes if it waited for the call. No margin needed.
                System.out.println(
                        "measured: SIGTERM with a 2 s call in flight: exited after " + stopping.toMillis() + " ms");
                assertThat(stopping)
                        .as("waited for the call in flight")
                        .isGreaterThanOrEqualTo(Duration.ofNanos(sent + callTakes.toNanos() - sigterm));
                // Waiting out the grace would take drain + grace; anything less means it stopped when the
                // call was done (measured: about drain + what was left of the call, plus the JVM's exit).
                assertThat(stopping).as("did not wait out the whole grace").isLessThan(drain.plus(grace));
                assertThat(stock.log())
                        .contains(
                                "serving PT0.5S more for 1 calls in flight",
                                "drain: stopped; every call in flight finished");
            } finally {
                channel.shutdownNow();
            }
        }
    }

    /** SIGKILL of one of {@code stocks} under Quote load through {@code channel} to Pricing. */
    private static void sigkillFailsOnlyTheCallsInFlightAndTheNextCallsGoElsewhere(
            Replicas stocks, ManagedChannel channel) throws Exception {
        try (SteadyLoad load = quoteLoad(channel, "killed")) {
            // The load reaches every replica before one of them dies.
            for (ServiceProcess stock : stocks.pods) {
                awaitTraffic(stock, "killed");
            }
            stocks.pods.get(1).kill();
            int atKill = load.succeeded();
            // Long enough for calls that still went to the dead replica to show: 100 Quotes per thread.
            await().atMost(Duration.ofSeconds(60)).until(() -> load.succeeded() >= atKill + 400);
            load.close();

            record("SIGKILL of 1 of 3 Stock replicas under Quote load: " + load.failedCount()
                    + " failed Quotes " + load.failures() + " after " + load.successesBeforeFailures()
                    + " successes (" + atKill + " at the kill); " + load.succeeded() + " Quotes succeeded");
            assertThat(load.failures().keySet())
                    .as("only calls cut off by the dying connection fail")
                    .isSubsetOf(Status.Code.UNAVAILABLE);
            // Four threads: the calls in flight on the dying connection, and at most one more each
            // picked before the balancer heard of it.
            assertThat(load.failedCount()).isLessThanOrEqualTo(8);
            // Pricing's channel drops the replica as the connection closes: after the first few
            // answers from the others (ten per thread), no call goes to it any more.
            assertThat(load.successesBeforeFailures())
                    .as("failures, by the successes before each")
                    .allMatch(successes -> successes <= atKill + 40);
        }
    }

    @Test
    void stockDownAltogetherFailsFastAndRecoversWhenItIsBack() throws Exception {
        Duration reconnectInterval = Duration.ofMillis(500);
        try (ServiceProcess stock = ServiceProcess.start("stock-service");
                ServiceProcess pricing = ServiceProcess.start(
                        "pricing-service",
                        "--grpc.client.stock.address=static://" + stock.target(),
                        "--grpcops.client.reconnect-interval=" + reconnectInterval.toMillis() + "ms");
                ServiceProcess edge = ServiceProcess.start(
                        "edge-service", "--grpc.client.pricing.address=static://" + pricing.target())) {
            for (ServiceProcess service : List.of(stock, pricing, edge)) {
                service.awaitServing(Duration.ofSeconds(90));
            }
            ManagedChannel toPricing = pricing.channel();
            ManagedChannel toEdge = edge.channel();
            try {
                PricingGrpc.PricingBlockingStub quotes = PricingGrpc.newBlockingStub(toPricing);
                QuoteRequest quote = QuoteRequest.newBuilder().setSku("down").build();
                quotes.withDeadlineAfter(5, TimeUnit.SECONDS).quote(quote);
                // A fresh Edge's first Checkouts pay for its cold start (class loading, JIT): on a loaded
                // machine more than the 1 s deadline below, whose lines then say DEADLINE_EXCEEDED. That
                // check is about Stock being down, so the cold start is paid while Stock is up.
                for (int i = 0; i < 5; i++) {
                    assertThat(EdgeGrpc.newBlockingStub(toEdge)
                                    .withDeadlineAfter(10, TimeUnit.SECONDS)
                                    .checkout(CheckoutRequest.newBuilder()
                                            .addSkus("warm")
                                            .build())
                                    .getLines(0)
                                    .getAvailable())
                            .as("Checkout while Stock is up")
                            .isTrue();
                }

                stock.terminate(Duration.ofSeconds(30));
                // A hang would end at the deadline (DEADLINE_EXCEEDED); a refused connection fails at once.
                StatusRuntimeException failed = org.assertj.core.api.Assertions.catchThrowableOfType(
                        StatusRuntimeException.class,
                        () -> quotes.withDeadlineAfter(10, TimeUnit.SECONDS).quote(quote));
                assertThat(failed).isNotNull();
                assertThat(failed.getStatus().getCode())
                        .as("fails fast, no hang")
                        .isEqualTo(Status.Code.UNAVAILABLE);

                // A reply at all is within the 1 s deadline: the dead downstream costs the lines, not the answer.
                CheckoutReply partial = EdgeGrpc.newBlockingStub(toEdge)
                        .withDeadlineAfter(1, TimeUnit.SECONDS)
                        .checkout(CheckoutRequest.newBuilder()
                                .addSkus("a")
                                .addSkus("b")
                                .build());
                assertThat(partial.getLinesList())
                        .extracting(Line::getAvailable)
                        .containsOnly(false);
                assertThat(partial.getLinesList()).extracting(Line::getReason).containsOnly("UNAVAILABLE");

                stock.start();
                stock.awaitServing(Duration.ofSeconds(90));
                long back = System.nanoTime();
                // Pricing's channel, with no backend for seconds, is nudged to reconnect every interval
                // (ReconnectNudgerTests holds the interval on a fake clock).
                await().atMost(Duration.ofSeconds(30))
                        .pollInterval(Duration.ofMillis(20))
                        .ignoreExceptions()
                        .until(() ->
                                quotes.withDeadlineAfter(1, TimeUnit.SECONDS).quote(quote) != null);
                record("Stock down altogether: Quote fails fast with UNAVAILABLE; Stock back and SERVING -> "
                        + "Quotes succeed again after "
                        + Duration.ofNanos(System.nanoTime() - back).toMillis() + " ms");
            } finally {
                toPricing.shutdownNow();
                toEdge.shutdownNow();
            }
        }
    }

    /** Pricing calling the three Stock replicas with health-checked round_robin, ready to serve. */
    private static ServiceProcess pricingBehind(Replicas stocks) {
        ServiceProcess pricing =
                ServiceProcess.start("pricing-service", "--grpc.client.stock.address=list:///" + stocks.addressList());
        try {
            return pricing.awaitServing(Duration.ofSeconds(90));
        } catch (RuntimeException e) {
            pricing.close();
            throw e;
        }
    }

    /** Four threads of Quotes (20 ms at Stock each, 2 s deadline) for one SKU. */
    private static SteadyLoad quoteLoad(ManagedChannel channel, String sku) {
        PricingGrpc.PricingBlockingStub quotes = PricingGrpc.newBlockingStub(channel);
        QuoteRequest quote =
                QuoteRequest.newBuilder().setSku(sku).setDelayMs(20).build();
        return new SteadyLoad(
                4, () -> quotes.withDeadlineAfter(2, TimeUnit.SECONDS).quote(quote));
    }

    /** SIGTERM, wait for the drain to finish and the process to exit, start it again. */
    static void restart(ServiceProcess replica) {
        replica.terminate(Duration.ofSeconds(60));
        replica.start();
        replica.awaitServing(Duration.ofSeconds(90));
    }

    /** A rolling update moves on once the new replica takes traffic, as readiness gates do. */
    private static void awaitTraffic(ServiceProcess stock, String sku) {
        ManagedChannel channel = stock.channel();
        try {
            await().atMost(Duration.ofSeconds(30))
                    .until(() -> StockGrpc.newBlockingStub(channel)
                                    .withDeadlineAfter(2, TimeUnit.SECONDS)
                                    .stats(StatsRequest.newBuilder().setSku(sku).build())
                                    .getSkus(0)
                                    .getCalls()
                            > 0);
        } finally {
            channel.shutdownNow();
        }
    }

    static void record(String line) throws IOException {
        System.out.println("measured: " + line);
        Files.writeString(
                Path.of("target/restart-numbers.txt"),
                line + System.lineSeparator(),
                StandardOpenOption.CREATE,
                StandardOpenOption.APPEND);
    }
}
