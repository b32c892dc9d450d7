package dev.grpcops.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.Map;
import org.junit.jupiter.api.Test;
import picocli.CommandLine;

class CliUsageTests {

    @Test
    void everyCommandHasHelp() {
        for (String command : new String[] {"call", "spread", "drain", "resume", "fault", "watch", "probe"}) {
            CliRun help = run(command, "--help");
            assertThat(help.exit()).as(command).isZero();
            assertThat(help.out()).contains("Usage: grpcops " + command);
        }
    }

    /**
     * Each run gets output of its own: a usage error prints the whole usage, which names every
     * option's choices, so a reason checked in output shared with an earlier run could come from
     * that run's usage instead.
     */
    @Test
    void badArgumentsExitWithUsageErrorAndTheReason() {
        CliRun missing = run("spread");
        assertThat(missing.exit()).isEqualTo(CommandLine.ExitCode.USAGE);
        assertThat(missing.err()).contains("Missing required parameter: 'TARGET'");

        CliRun badConfig = run("spread", "a:1", "--config", "random");
        assertThat(badConfig.exit()).isEqualTo(CommandLine.ExitCode.USAGE);
        assertThat(badConfig.err()).contains("--config", "'random'", "pinned, rr, hc");

        CliRun badTimeout = run("spread", "a:1", "--timeout", "soon");
        assertThat(badTimeout.exit()).isEqualTo(CommandLine.ExitCode.USAGE);
        assertThat(badTimeout.err()).contains("'soon' is not a duration like 250ms, 3s or 1m");
    }

    @Test
    void drainWithoutTokenDoesNotCall() {
        CliRun drain = CliRun.of(
                cli -> ((DrainCommand) cli.getSubcommands().get("drain").getCommand()).environment = Map.of(),
                "drain",
                "127.0.0.1:1");
        // 2, not the 1 of a failed call: it stopped before calling 127.0.0.1:1, where nothing listens.
        assertThat(drain.exit()).isEqualTo(2);
        assertThat(drain.err()).contains("set GRPCOPS_ADMIN_TOKEN");
    }

    @Test
    void probeOfNothingListeningFails() {
        // A refused connection fails the check at once; the deadline only bounds it, and is long
        // enough that a cold JVM's first call cannot turn UNAVAILABLE into DEADLINE_EXCEEDED.
        CliRun probe = run("probe", "127.0.0.1:1", "--timeout", "10s");
        assertThat(probe.exit()).isEqualTo(1);
        assertThat(probe.err()).contains("error: UNAVAILABLE");
    }

    private static CliRun run(String... args) {
        return CliRun.of(args);
    }
}
