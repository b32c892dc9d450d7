package dev.grpcops.cli;

import static org.assertj.core.api.Assertions.assertThat;

import com.google.gson.JsonObject;
import com.google.gson.JsonParser;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import picocli.CommandLine;

/** grpcops load against a tiny chain.v1.Stock on a Netty loopback port (TestStockServer). */
@Timeout(60)
class LoadCommandTests {

    private TestStockServer stock;

    @BeforeEach
    void startStock() throws Exception {
        stock = new TestStockServer();
    }

    @AfterEach
    void stopStock() throws Exception {
        stock.close();
    }

    /**
     * A rated run as the server sees it: the warm-up's and the measured run's calls all arrive, and
     * only the measured ones are reported. The schedule itself (when each call is due) is
     * {@link OpenLoopTests}' on a fake clock; how closely a loaded machine keeps it is a benchmark's.
     */
    @Test
    void aRatedRunSendsItsScheduleAndReportsOnlyTheMeasuredCalls() throws Exception {
        try (TestStockServer server = new TestStockServer()) {
            CliRun run = run(
                    "load",
                    server.target(),
                    "--method",
                    "Check",
                    "--data",
                    "{\"sku\":\"a\"}",
                    "--rate",
                    "200",
                    "--duration",
                    "3s",
                    "--warmup",
                    "1s",
                    "--json");

            assertThat(run.exit()).as(run.err()).isZero();
            assertThat(server.calls.get()).as("1s warm-up + 3s at 200/s").isEqualTo(200 + 600);
            JsonObject report = JsonParser.parseString(run.out()).getAsJsonObject();
            assertThat(report.get("sent").getAsLong())
                    .as("the warm-up is not reported")
                    .isEqualTo(600);
            assertThat(report.getAsJsonObject("status").get("OK").getAsLong()).isEqualTo(600);
        }
    }

    @Test
    void concurrencyKeepsExactlyNOutstanding() {
        CliRun run = run(
                "load",
                stock.target(),
                "--method",
                "chain.v1.Stock/Check",
                "--data",
                "{\"sku\":\"a\",\"delayMs\":20}",
                "--concurrency",
                "8",
                "-n",
                "200",
                "--json");

        assertThat(run.exit()).as(run.err()).isZero();
        assertThat(stock.calls.get()).isEqualTo(200);
        assertThat(stock.maxInProgress.get()).isEqualTo(8);
        JsonObject report = JsonParser.parseString(run.out()).getAsJsonObject();
        assertThat(report.get("mode").getAsString()).isEqualTo("concurrency");
        assertThat(report.get("concurrency").getAsInt()).isEqualTo(8);
        assertThat(report.get("rate").isJsonNull()).isTrue();
        assertThat(report.getAsJsonObject("status").get("OK").getAsLong()).isEqualTo(200);
    }

    @Test
    void statusCountsAreTheServersAnswers() {
        stock.failEvery = 4;

        CliRun run = run("load", stock.target(), "--method", "Check", "--concurrency", "4", "-n", "100", "--json");

        assertThat(run.exit()).as("failed calls are a result, not a failed run").isZero();
        JsonObject status = JsonParser.parseString(run.out()).getAsJsonObject().getAsJsonObject("status");
        assertThat(status.keySet()).containsExactlyInAnyOrder("OK", "UNAVAILABLE");
        assertThat(status.get("OK").getAsLong()).isEqualTo(75);
        assertThat(status.get("UNAVAILABLE").getAsLong()).isEqualTo(25);
    }

    @Test
    void deadlineIsHonoured() {
        CliRun run = run(
                "load",
                stock.target(),
                "--method",
                "Check",
                "--data",
                "{\"sku\":\"a\",\"delay_ms\":5000}",
                "--concurrency",
                "5",
                "-n",
                "10",
                "--deadline",
                "100ms",
                "--json");

        assertThat(run.exit()).as(run.err()).isZero();
        JsonObject report = JsonParser.parseString(run.out()).getAsJsonObject();
        assertThat(report.getAsJsonObject("status").get("DEADLINE_EXCEEDED").getAsLong())
                .isEqualTo(10);
        assertThat(report.getAsJsonObject("latency_ms").get("p50").getAsDouble())
                .isGreaterThanOrEqualTo(99.0);
    }

    @Test
    void metadataIsSentWithEveryCall() {
        CliRun run = run(
                "load",
                stock.target(),
                "--method",
                "Check",
                "--concurrency",
                "2",
                "-n",
                "6",
                "-H",
                "x-grpcops-caller=noisy",
                "--header",
                "x-grpcops-criticality=sheddable");

        assertThat(run.exit()).as(run.err()).isZero();
        assertThat(stock.callers).hasSize(6).containsOnly("noisy");
        assertThat(stock.criticalities).hasSize(6).containsOnly("sheddable");
    }

    @Test
    void connectionsAreSeparateAndTakenInTurn() {
        CliRun run = run(
                "load", stock.target(), "--method", "Check", "--concurrency", "3", "-n", "30", "--connections", "3");

        assertThat(run.exit()).as(run.err()).isZero();
        assertThat(stock.peers).hasSize(3);
    }

    @Test
    void jsonReportHasItsShapeAndNothingElseOnStdout() {
        CliRun run =
                run("load", stock.target(), "--method", "Check", "--rate", "100", "-n", "20", "--json", "--progress");

        assertThat(run.exit()).as(run.err()).isZero();
        assertThat(run.out().strip()).doesNotContain("\n");
        JsonObject report = JsonParser.parseString(run.out()).getAsJsonObject();
        assertThat(report.keySet())
                .containsExactly(
                        "target",
                        "method",
                        "mode",
                        "rate",
                        "concurrency",
                        "duration_s",
                        "sent",
                        "completed",
                        "status",
                        "throughput_per_s",
                        "latency_ms");
        assertThat(report.get("target").getAsString()).isEqualTo(stock.target());
        assertThat(report.get("method").getAsString()).isEqualTo("chain.v1.Stock/Check");
        assertThat(report.get("mode").getAsString()).isEqualTo("rate");
        assertThat(report.get("rate").getAsInt()).isEqualTo(100);
        assertThat(report.get("concurrency").isJsonNull()).isTrue();
        assertThat(report.get("duration_s").getAsDouble()).isPositive();
        long statusSum = report.getAsJsonObject("status").entrySet().stream()
                .mapToLong(e -> e.getValue().getAsLong())
                .sum();
        assertThat(report.get("sent").getAsLong()).isEqualTo(20).isEqualTo(statusSum);
        assertThat(report.get("completed").getAsLong()).isEqualTo(20);
        assertThat(report.getAsJsonObject("latency_ms").keySet())
                .containsExactly("p50", "p90", "p99", "p999", "max", "mean");
        // the progress line went to stderr (its last line is printed when the run ends)
        assertThat(run.err()).contains("sent 20", "ok 20", "p99");
    }

    @Test
    void textReportIsATable() {
        CliRun run = run("load", stock.target(), "--method", "Check", "--rate", "100", "-n", "10");

        assertThat(run.exit()).as(run.err()).isZero();
        assertThat(run.out())
                .contains("chain.v1.Stock/Check", "rate 100/s", "throughput")
                .containsPattern("OK\\s+10\\n")
                .contains("p50", "p90", "p99", "p99.9", "max", "mean");
        assertThat(run.err()).as("no progress when stderr is not a terminal").isEmpty();
    }

    /** A stalled server costs the client at most --max-outstanding calls; the sends beyond are counted, not queued. */
    @Test
    void aStalledServerDoesNotQueueCallsWithoutBound() {
        // Sends 10..49 are due 50-245 ms in, long before the first deadline (1 s) frees a slot.
        CliRun run = run(
                "load",
                stock.target(),
                "--method",
                "Check",
                "--data",
                "{\"sku\":\"stall\"}",
                "--rate",
                "200",
                "-n",
                "50",
                "--max-outstanding",
                "10",
                "--deadline",
                "1s",
                "--json");

        assertThat(run.exit()).as(run.err()).isZero();
        assertThat(stock.calls.get()).isEqualTo(10);
        JsonObject status = JsonParser.parseString(run.out()).getAsJsonObject().getAsJsonObject("status");
        assertThat(status.get("DEADLINE_EXCEEDED").getAsLong()).isEqualTo(10);
        assertThat(status.get("CLIENT_OVERLOADED").getAsLong()).isEqualTo(40);
        assertThat(run.err()).contains("40 intended sends were not made", "--max-outstanding");
    }

    @Test
    void unreachableTargetExitsOne() {
        CliRun run = run("load", "127.0.0.1:1", "--method", "Check", "--rate", "10", "-n", "5");

        assertThat(run.exit()).isEqualTo(1);
        assertThat(run.err()).contains("could not reach 127.0.0.1:1");
        assertThat(run.out()).isEmpty();
    }

    /** Each case fails before any connection: 127.0.0.1:1 would otherwise exit 1, not 2. */
    @ParameterizedTest(name = "{0}")
    @CsvSource(delimiter = ';', quoteCharacter = '"', textBlock = """
            --method Check -n 5                                  ; --rate=N | --concurrency=N ;
            --method Check --rate 5 --concurrency 5 -n 5         ; --rate=N, --concurrency=N are mutually exclusive ;
            --method Check --rate 0 -n 5                         ; --rate must be at least 1, got 0 ;
            --method Check --rate -5 -n 5                        ; --rate must be at least 1, got -5 ;
            --method Check --concurrency 0 -n 5                  ; --concurrency must be at least 1 ;
            --method Check --rate 5                              ; --duration=DURATION | -n=COUNT ;
            --method Check --rate 5 --duration 1s -n 5           ; mutually exclusive ;
            --method Check --rate 5 --duration soon              ; '--duration' ; 'soon' is not a duration like 250ms, 3s or 1m
            --method Check --rate 5 --duration 0s                ; --duration must be more than 0s ;
            --method Check --rate 5 -n 0                         ; -n must be at least 1 ;
            --method Check --rate 5 -n 5 --deadline 0ms          ; --deadline must be more than 0ms ;
            --method Check --rate 5 -n 5 --connections 0         ; --connections must be at least 1 ;
            --method Check --rate 5 -n 5 --max-outstanding 0     ; --max-outstanding must be at least 1 ;
            --method Check --rate 5 -n 5 -H novalue              ; -H 'novalue' is not key=value ;
            --method Check --rate 5 -n 5 -H =x                   ; -H '=x' is not key=value ;
            --method Check --rate 5 -n 5 -H Bad!Key=x            ; -H 'Bad!Key=x' ;
            --method Nope --rate 5 -n 5                          ; --method: unknown method 'Nope' ; known: chain.v1.Edge/Checkout (Checkout), chain.v1.Pricing/Quote (Quote)
            --rate 5 -n 5                                        ; Missing required option: '--method=METHOD' ;
            """)
    void badArgumentsExitTwoNamingTheOption(String args, String expected, String alsoExpected) {
        String[] words = ("load 127.0.0.1:1 " + args).split(" +");

        CliRun run = run(words);

        assertThat(run.exit()).as(run.err()).isEqualTo(CommandLine.ExitCode.USAGE);
        assertThat(run.err()).contains(expected);
        if (alsoExpected != null) {
            assertThat(run.err()).contains(alsoExpected);
        }
        assertThat(run.out()).isEmpty();
    }

    @Test
    void badDataExitsTwoNamingTheProblem() {
        CliRun notJson =
                run("load", "127.0.0.1:1", "--method", "Check", "--data", "{\"sku\":", "--rate", "5", "-n", "5");
        assertThat(notJson.exit()).isEqualTo(CommandLine.ExitCode.USAGE);
        assertThat(notJson.err()).contains("--data is not a chain.v1.CheckRequest in protobuf JSON");

        CliRun unknownField =
                run("load", "127.0.0.1:1", "--method", "Check", "--data", "{\"skew\":\"a\"}", "--rate", "5", "-n", "5");
        assertThat(unknownField.exit()).isEqualTo(CommandLine.ExitCode.USAGE);
        assertThat(unknownField.err()).contains("--data", "skew");
    }

    @Test
    void helpDocumentsTheBoundAndTheModes() {
        CliRun help = run("load", "--help");

        assertThat(help.exit()).isZero();
        assertThat(help.out())
                .contains(
                        "Usage: grpcops load",
                        "--rate",
                        "--concurrency",
                        "--duration",
                        "-n",
                        "--deadline",
                        "--warmup",
                        "--connections",
                        "--json",
                        "--max-outstanding",
                        "CLIENT_OVERLOADED");
    }

    @Test
    void methodsByFullOrShortName() {
        assertThat(Methods.find("Checkout").fullName()).isEqualTo("chain.v1.Edge/Checkout");
        assertThat(Methods.find("chain.v1.Pricing/Quote").shortName()).isEqualTo("Quote");
        assertThat(Methods.find("/chain.v1.Stock/Stats").fullName()).isEqualTo("chain.v1.Stock/Stats");
        assertThat(Methods.find("Who").fullName()).isEqualTo("grpcops.v1.WhoAmI/Who");
        assertThat(Methods.find("grpcops.v1.Faults/Get").shortName()).isEqualTo("Get");
        assertThat(Methods.ALL).hasSize(6);
    }

    private static CliRun run(String... args) {
        return CliRun.of(args);
    }
}
