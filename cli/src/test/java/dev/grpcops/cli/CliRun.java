package dev.grpcops.cli;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.util.function.Consumer;
import picocli.CommandLine;

/**
 * One run of the CLI as a user runs it, in process: its exit code and what it printed to each
 * stream. The CLI's tests and the system tests share it (the module's test jar).
 */
public record CliRun(int exit, String out, String err) {

    public static CliRun of(String... args) {
        return of(cli -> {}, args);
    }

    /** With {@code setUp} given the command line first (to set what a command reads from outside). */
    public static CliRun of(Consumer<CommandLine> setUp, String... args) {
        StringWriter out = new StringWriter();
        StringWriter err = new StringWriter();
        CommandLine cli = GrpcOpsCli.commandLine().setOut(new PrintWriter(out)).setErr(new PrintWriter(err));
        setUp.accept(cli);
        int exit = cli.execute(args);
        return new CliRun(exit, out.toString(), err.toString());
    }
}
