package dev.grpcops.cli;

import static org.assertj.core.api.Assertions.assertThat;

import com.google.gson.JsonParser;
import java.io.PrintWriter;
import java.io.StringWriter;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

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

    private record Run(int exit, String out, String err) {}

    private static Run run(String... args) {
        StringWriter out = new StringWriter();
        StringWriter err = new StringWriter();
        int exit = GrpcOpsCli.commandLine()
                .setOut(new PrintWriter(out))
                .setErr(new PrintWriter(err))
                .execute(args);
        return new Run(exit, out.toString(), err.toString());
    }

    @Test
    void answersWithTheReplyAsJsonAndSendsTheHeaders() {
        Run call = run(
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
        Run badJson = run("call", stock.target(), "Check", "{\"sku\":");
        assertThat(badJson.exit()).isEqualTo(2);
        Run unknown = run("call", stock.target(), "Nope");
        assertThat(unknown.exit()).isEqualTo(2);
        assertThat(unknown.err()).contains("unknown method 'Nope'", "chain.v1.Edge/Checkout");
    }

    @Test
    void aFailedCallExitsOneWithItsStatus() {
        Run failed = run("call", "127.0.0.1:1", "Check", "{\"sku\":\"a\"}", "--deadline", "5s");
        assertThat(failed.exit()).isEqualTo(1);
        assertThat(failed.err()).contains("UNAVAILABLE");
    }
}
