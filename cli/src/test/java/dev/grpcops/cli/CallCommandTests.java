package dev.grpcops.cli;

import static org.assertj.core.api.Assertions.assertThat;

import com.google.gson.JsonParser;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import picocli.CommandLine;

/** {@code grpcops call}: JSON in, the answer as JSON out, against a real server on loopback. */
@Timeout(60)
class CallCommandTests {

    private TestStockServer stock;

    @BeforeEach
    void start() throws Exception {
        stock = new TestStockServer();
    }

    @AfterEach
    void stop() throws InterruptedException {
        stock.close();
    }

    private static CliRun run(String... args) {
        return CliRun.of(args);
    }

    @Test
    void answersWithTheReplyAsJsonAndSendsTheHeaders() {
        CliRun call = run(
                "call", stock.target(), "Check", "{\"sku\":\"a\"}", "--deadline", "5s", "-H", "x-grpcops-caller=me");
        assertThat(call.exit()).as(call.err()).isZero();
        assertThat(JsonParser.parseString(call.out())
                        .getAsJsonObject()
                        .get("sku")
                        .getAsString())
                .isEqualTo("a");
        assertThat(stock.callers).contains("me");
    }

    @Test
    void badRequestsAreRefusedBeforeCalling() {
        CliRun badJson = run("call", stock.target(), "Check", "{\"sku\":");
        assertThat(badJson.exit()).isEqualTo(2);
        CliRun unknown = run("call", stock.target(), "Nope");
        assertThat(unknown.exit()).isEqualTo(2);
        assertThat(unknown.err()).contains("unknown method 'Nope'", "chain.v1.Edge/Checkout");
    }

    @Test
    void ledgerPrintsTheWaterfallOfAHopThatHoldsTheToken() {
        CliRun run = CliRun.of(
                withToken(TestStockServer.LEDGER_TOKEN),
                "call",
                stock.target(),
                "Check",
                "{\"sku\":\"a\"}",
                "--deadline",
                "5s",
                "--ledger");

        assertThat(run.exit()).as(run.err()).isZero();
        assertThat(JsonParser.parseString(run.out())
                        .getAsJsonObject()
                        .get("sku")
                        .getAsString())
                .as("the answer stays alone on stdout")
                .isEqualTo("a");
        assertThat(run.err()).contains("budget ledger", "received", "slack");
        assertThat(run.err().lines().filter(line -> line.startsWith("chain.v1.Stock")))
                .singleElement()
                .satisfies(line -> assertThat(line).matches("chain\\.v1\\.Stock\\s+(4\\d{3}|5000)\\.\\d .*"));
    }

    @Test
    void ledgerWithAnotherTokenSaysNoneCameBackAndWithoutOneIsRefused() {
        CliRun another = CliRun.of(
                withToken("another-token-0123456789"), "call", stock.target(), "Check", "{\"sku\":\"a\"}", "--ledger");
        assertThat(another.exit()).isZero();
        assertThat(another.err()).contains("no budget ledger came back");

        CliRun none = CliRun.of(withToken(null), "call", stock.target(), "Check", "{\"sku\":\"a\"}", "--ledger");
        assertThat(none.exit()).isEqualTo(2);
        assertThat(none.err()).contains("--ledger needs the services' ledger token in GRPCOPS_BUDGET_LEDGER_TOKEN");
    }

    /** The call command sees {@code token} (null: none) as GRPCOPS_BUDGET_LEDGER_TOKEN, whatever the test's own environment holds. */
    private static java.util.function.Consumer<CommandLine> withToken(String token) {
        return cli -> ((CallCommand) cli.getSubcommands().get("call").getCommand()).environment =
                token == null ? Map.of() : Map.of("GRPCOPS_BUDGET_LEDGER_TOKEN", token);
    }

    @Test
    void aFailedCallExitsOneWithItsStatus() {
        CliRun failed = run("call", "127.0.0.1:1", "Check", "{\"sku\":\"a\"}", "--deadline", "5s");
        assertThat(failed.exit()).isEqualTo(1);
        assertThat(failed.err()).contains("UNAVAILABLE");
    }
}
