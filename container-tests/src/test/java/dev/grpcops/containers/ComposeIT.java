package dev.grpcops.containers;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.google.gson.JsonElement;
import com.google.gson.JsonParser;
import dev.grpcops.cli.HealthProbe;
import dev.grpcops.proto.chain.v1.CheckoutReply;
import dev.grpcops.proto.chain.v1.CheckoutRequest;
import dev.grpcops.proto.chain.v1.EdgeGrpc;
import dev.grpcops.proto.chain.v1.Line;
import io.grpc.ManagedChannel;
import io.grpc.StatusRuntimeException;
import io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import java.util.stream.StreamSupport;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * docker-compose.yml as users run it ({@link ComposeSuite}): a Checkout through Edge's published
 * port, Prometheus scraping every service, and every query of the Grafana dashboard answered.
 */
@ExtendWith(ComposeSuite.Resolver.class)
class ComposeIT {

    /**
     * What a JVM from Java 24 on prints at start about a library's use of sun.misc.Unsafe or native
     * code: for library authors, not operators, so neither the CLI nor the services print it.
     */
    private static final String[] JVM_WARNINGS = {"sun.misc.Unsafe", "restricted method"};

    private static final HttpClient HTTP =
            HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();

    /** Builds the images (cached layers after the first run) and starts the stack: minutes at most. */
    @BeforeAll
    @Timeout(value = 12, unit = TimeUnit.MINUTES, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
    static void up(ComposeSuite suite) {
        // brought up by ComposeSuite, taken down after the run
    }

    @Test
    @Timeout(value = 8, unit = TimeUnit.MINUTES, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
    void checkoutThroughEdgesPublishedPortAndEveryScrapeTargetUp() throws Exception {
        await().atMost(Duration.ofMinutes(4))
                .pollInterval(Duration.ofSeconds(2))
                .until(() -> HealthProbe.probe("127.0.0.1:50063", "chain.v1.Edge", Duration.ofSeconds(2))
                        .serving());

        ManagedChannel channel = NettyChannelBuilder.forAddress("127.0.0.1", 50063)
                .usePlaintext()
                .build();
        try {
            await().atMost(Duration.ofMinutes(1)).ignoreExceptions().untilAsserted(() -> {
                CheckoutReply reply = EdgeGrpc.newBlockingStub(channel)
                        .withDeadlineAfter(2, TimeUnit.SECONDS)
                        .checkout(CheckoutRequest.newBuilder()
                                .addSkus("compose-a")
                                .addSkus("compose-b")
                                .build());
                assertThat(reply.getLinesList()).extracting(Line::getAvailable).containsOnly(true);
                assertThat(reply.getLines(0).getPriceCents()).isEqualTo(1200);
            });
        } finally {
            channel.shutdownNow();
        }

        await().atMost(Duration.ofMinutes(2))
                .pollInterval(Duration.ofSeconds(2))
                .ignoreExceptions()
                .untilAsserted(() -> assertThat(scrapeTargets())
                        .hasSize(9)
                        .allSatisfy((instance, health) ->
                                assertThat(health).as(instance).isEqualTo("up")));
    }

    /**
     * Every query of the Grafana dashboard (deploy/grafana/dashboards/grpcops.json), asked of the
     * suite's own Prometheus after traffic that touches every panel: each parses and returns series.
     */
    @Test
    @Timeout(value = 8, unit = TimeUnit.MINUTES, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
    void everyDashboardQueryReturnsSeries() throws Exception {
        await().atMost(Duration.ofMinutes(4))
                .pollInterval(Duration.ofSeconds(2))
                .until(() -> HealthProbe.probe("127.0.0.1:50063", "chain.v1.Edge", Duration.ofSeconds(2))
                        .serving());
        ManagedChannel edge = NettyChannelBuilder.forAddress("127.0.0.1", 50063)
                .usePlaintext()
                .build();
        ManagedChannel pricing = NettyChannelBuilder.forAddress("127.0.0.1", 50062)
                .usePlaintext()
                .build();
        List<String> queries = dashboardQueries();
        assertThat(queries).hasSizeGreaterThan(20);
        try {
            await().atMost(Duration.ofMinutes(4))
                    .pollInterval(Duration.ofSeconds(5))
                    // A Checkout slower than its deadline on a busy machine only means another round.
                    .ignoreExceptionsInstanceOf(StatusRuntimeException.class)
                    .untilAsserted(() -> {
                        // Traffic that every panel sees: Checkouts with and without a deadline, a slow line, a
                        // Quote whose budget cannot cover Stock.
                        for (int i = 0; i < 20; i++) {
                            EdgeGrpc.newBlockingStub(edge)
                                    .withDeadlineAfter(2, TimeUnit.SECONDS)
                                    .checkout(CheckoutRequest.newBuilder()
                                            .addSkus("panel-" + i)
                                            .addSkus("panel-b")
                                            .build());
                        }
                        EdgeGrpc.newBlockingStub(edge)
                                .checkout(CheckoutRequest.newBuilder()
                                        .addSkus("no-deadline")
                                        .build());
                        EdgeGrpc.newBlockingStub(edge)
                                .withDeadlineAfter(1, TimeUnit.SECONDS)
                                .checkout(CheckoutRequest.newBuilder()
                                        .addSkus("quick")
                                        .addSkus("slow")
                                        .addSlowSkus("slow")
                                        .build());
                        assertThat(org.assertj.core.api.Assertions.catchThrowable(
                                        () -> dev.grpcops.proto.chain.v1.PricingGrpc.newBlockingStub(pricing)
                                                .withDeadlineAfter(450, TimeUnit.MILLISECONDS)
                                                .quote(dev.grpcops.proto.chain.v1.QuoteRequest.newBuilder()
                                                        .setSku("too-late")
                                                        .build())))
                                .as("a Quote whose budget cannot cover Stock")
                                .isNotNull();
                        List<String> empty = new ArrayList<>();
                        for (String query : queries) {
                            if (!returnsSeries(query)) {
                                empty.add(query);
                            }
                        }
                        assertThat(empty).as("dashboard queries without series").isEmpty();
                    });
        } finally {
            edge.shutdownNow();
            pricing.shutdownNow();
        }
    }

    /**
     * What an operator types to see where a Checkout's deadline went: {@code grpcops call … --ledger}
     * in the Edge container, whose environment holds the suite's ledger token. Every hop answers with
     * its line, each below the one that called it.
     */
    @Test
    @Timeout(value = 8, unit = TimeUnit.MINUTES, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
    void theLedgerOfOneCheckoutShowsTheThreeHops(ComposeSuite suite) {
        await().atMost(Duration.ofMinutes(4))
                .pollInterval(Duration.ofSeconds(2))
                .until(() -> HealthProbe.probe("127.0.0.1:50063", "chain.v1.Edge", Duration.ofSeconds(2))
                        .serving());
        await().atMost(Duration.ofMinutes(2))
                .pollInterval(Duration.ofSeconds(2))
                // A Checkout slower than its deadline on a busy machine only means another round.
                .ignoreExceptionsInstanceOf(IllegalStateException.class)
                .untilAsserted(() -> {
                    String printed = suite.exec(
                            "edge",
                            "grpcops",
                            "call",
                            "127.0.0.1:50063",
                            "Checkout",
                            "{\"skus\":[\"ledger-a\"]}",
                            "--deadline",
                            "2s",
                            "--ledger");
                    assertThat(printed).contains("budget ledger");
                    assertThat(printed).doesNotContain(JVM_WARNINGS);
                    assertThat(printed.lines())
                            .anyMatch(line -> line.startsWith("chain.v1.Edge "))
                            .anyMatch(line -> line.startsWith("  chain.v1.Pricing "))
                            .anyMatch(line -> line.startsWith("    chain.v1.Stock "));
                });
        for (String service : List.of("edge", "pricing-1", "stock-1")) {
            assertThat(suite.logs(service)).as(service + "'s log").doesNotContain(JVM_WARNINGS);
        }
    }

    /**
     * A newcomer's first command, as the compose file's comment gives it: the operator CLI's own image
     * answers with the answer alone, no JVM warnings before it.
     */
    @Test
    @Timeout(value = 8, unit = TimeUnit.MINUTES, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
    void theClientImagePrintsItsAnswerAlone(ComposeSuite suite) {
        await().atMost(Duration.ofMinutes(4))
                .pollInterval(Duration.ofSeconds(2))
                .until(() -> HealthProbe.probe("127.0.0.1:50063", "chain.v1.Edge", Duration.ofSeconds(2))
                        .serving());
        String printed = suite.runClient("probe", "edge:50063", "--service", "chain.v1.Edge", "--timeout", "5s");
        assertThat(printed).contains("SERVING").doesNotContain(JVM_WARNINGS);
    }

    private static List<String> dashboardQueries() throws IOException {
        var dashboard = JsonParser.parseString(
                        Files.readString(Docker.ROOT.resolve("deploy/grafana/dashboards/grpcops.json")))
                .getAsJsonObject();
        List<String> queries = new ArrayList<>();
        for (JsonElement panel : dashboard.getAsJsonArray("panels")) {
            for (JsonElement target : panel.getAsJsonObject().getAsJsonArray("targets")) {
                queries.add(target.getAsJsonObject().get("expr").getAsString());
            }
        }
        return queries;
    }

    /** Whether Prometheus parses {@code query} (a bad one fails the test at once) and answers with series. */
    private static boolean returnsSeries(String query) throws IOException, InterruptedException {
        HttpResponse<String> response = HTTP.send(
                HttpRequest.newBuilder(URI.create("http://127.0.0.1:9090/api/v1/query?query="
                                + java.net.URLEncoder.encode(query, java.nio.charset.StandardCharsets.UTF_8)))
                        .timeout(Duration.ofSeconds(10))
                        .build(),
                HttpResponse.BodyHandlers.ofString());
        var body = JsonParser.parseString(response.body()).getAsJsonObject();
        assertThat(body.get("status").getAsString())
                .as(query + ": " + response.body())
                .isEqualTo("success");
        return !body.getAsJsonObject("data").getAsJsonArray("result").isEmpty();
    }

    /** Prometheus' view: instance -> health. */
    private static Map<String, String> scrapeTargets() throws IOException, InterruptedException {
        HttpResponse<String> response = HTTP.send(
                HttpRequest.newBuilder(URI.create("http://127.0.0.1:9090/api/v1/targets"))
                        .timeout(Duration.ofSeconds(10))
                        .build(),
                HttpResponse.BodyHandlers.ofString());
        Iterable<JsonElement> targets = JsonParser.parseString(response.body())
                .getAsJsonObject()
                .getAsJsonObject("data")
                .getAsJsonArray("activeTargets");
        return StreamSupport.stream(targets.spliterator(), false)
                .map(JsonElement::getAsJsonObject)
                .collect(Collectors.toMap(
                        t -> t.getAsJsonObject("labels").get("instance").getAsString(),
                        t -> t.get("health").getAsString()));
    }
}
