package dev.grpcops.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.util.Map;
import org.junit.jupiter.api.Test;
import picocli.CommandLine;

class CliUsageTests {

    private final StringWriter out = new StringWriter();
    private final StringWriter err = new StringWriter();

    @Test
    void everyCommandHasHelp() {
        for (String command : new String[] {"spread", "drain", "resume", "watch", "probe"}) {
            assertThat(run(command, "--help")).isZero();
            assertThat(out.toString()).contains("Usage: grpcops " + command);
        }
    }

    @Test
    void badArgumentsExitNonZeroWithTheReason() {
        assertThat(run("spread")).isNotZero();
        assertThat(err.toString()).contains("Missing required parameter: 'TARGET'");
        assertThat(run("spread", "a:1", "--config", "random")).isNotZero();
        assertThat(err.toString()).contains("pinned, rr, hc");
        assertThat(run("spread", "a:1", "--timeout", "soon")).isNotZero();
        assertThat(err.toString()).contains("like 250ms, 3s or 1m");
    }

    @Test
    void drainWithoutTokenDoesNotCall() {
        CommandLine cli = cli();
        DrainCommand drain = cli.getSubcommands().get("drain").getCommand();
        drain.environment = Map.of();
        assertThat(cli.execute("drain", "127.0.0.1:1")).isEqualTo(2);
        assertThat(err.toString()).contains("set GRPCOPS_ADMIN_TOKEN");
    }

    @Test
    void probeOfNothingListeningFails() {
        assertThat(run("probe", "127.0.0.1:1", "--timeout", "500ms")).isEqualTo(1);
        assertThat(err.toString()).contains("error: UNAVAILABLE");
    }

    private int run(String... args) {
        return cli().execute(args);
    }

    private CommandLine cli() {
        return GrpcOpsCli.commandLine().setOut(new PrintWriter(out)).setErr(new PrintWriter(err));
    }
}
