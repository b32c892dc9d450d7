package dev.grpcops.cli;

import static org.assertj.core.api.Assertions.assertThat;

import com.google.gson.JsonParser;
import java.io.PrintWriter;
import java.io.StringWriter;
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
        CommandLine cli = GrpcOpsCli.commandLine();
        StringWriter out = new StringWriter();
        StringWriter err = new StringWriter();
        cli.setOut(new PrintWriter(out)).setErr(new PrintWriter(err));
        CallCommand call = cli.getSubcommands().get("call").getCommand();
        call.environment = Map.of("GRPCOPS_ADMIN_TOKEN", TestStockServer.LEDGER_TOKEN);

        int exit = cli.execute("call", stock.target(), "Check", "{\"sku\":\"a\"}", "--deadline", "5s", "--ledger");

        assertThat(exit).as(err.toString()).isZero();
        assertThat(JsonParser.parseString(out.toString())
                        .getAsJsonObject()
                        .get("sku")
                        .getAsString())
                .as("the answer stays alone on stdout")
                .isEqualTo("a");
        assertThat(err.toString()).contains("budget ledger", "received", "slack");
        assertThat(err.toString().lines().filter(line -> line.startsWith("chain.v1.Stock")))
                .singleElement()
                .satisfies(line -> assertThat(line).matches("chain\\.v1\\.Stock\\s+(4\\d{3}|5000)\\.\\d .*"));
    }

    @Test
    void ledgerWithAnotherTokenSaysNoneCameBackAndWithoutOneIsRefused() {
        CommandLine cli = GrpcOpsCli.commandLine();
        StringWriter err = new StringWriter();
        cli.setOut(new PrintWriter(new StringWriter())).setErr(new PrintWriter(err));
        CallCommand call = cli.getSubcommands().get("call").getCommand();
        call.environment = Map.of("GRPCOPS_ADMIN_TOKEN", "another-token-0123456789");
        assertThat(cli.execute("call", stock.target(), "Check", "{\"sku\":\"a\"}", "--ledger"))
                .isZero();
        assertThat(err.toString()).contains("no budget ledger came back");

        call.environment = Map.of();
        assertThat(cli.execute("call", stock.target(), "Check", "{\"sku\":\"a\"}", "--ledger"))
                .isEqualTo(2);
        assertThat(err.toString()).contains("--ledger needs the services' admin token in GRPCOPS_ADMIN_TOKEN");
    }

    @Test
    void aFailedCallExitsOneWithItsStatus() {
        CliRun failed = run("call", "127.0.0.1:1", "Check", "{\"sku\":\"a\"}", "--deadline", "5s");
        assertThat(failed.exit()).isEqualTo(1);
        assertThat(failed.err()).contains("UNAVAILABLE");
    }
}
