package dev.grpcops.cli;

import io.grpc.StatusRuntimeException;
import picocli.CommandLine;
import picocli.CommandLine.Command;

/** The operator CLI: see with your own eyes where calls land, and take a pod out of traffic. */
@Command(
        name = "grpcops",
        mixinStandardHelpOptions = true,
        version = "grpcops 0.1.0",
        description = "Operate grpcops services: where calls land, draining, health, load.",
        subcommands = {
            CallCommand.class,
            SpreadCommand.class,
            DrainCommand.class,
            ResumeCommand.class,
            FaultCommand.class,
            WatchCommand.class,
            ProbeCommand.class,
            LoadCommand.class,
            CommandLine.HelpCommand.class
        })
public final class GrpcOpsCli {

    public static void main(String[] args) {
        System.exit(commandLine().execute(args));
    }

    public static CommandLine commandLine() {
        return new CommandLine(new GrpcOpsCli())
                .registerConverter(java.time.Duration.class, Durations::parse)
                .setExecutionExceptionHandler((failure, command, parsed) -> {
                    if (failure instanceof StatusRuntimeException rpc) {
                        command.getErr().println(errorLine(rpc));
                    } else {
                        command.getErr().println("error: " + failure.getMessage());
                    }
                    return 1;
                });
    }

    /** What a command prints for a failed call: {@code error: CODE: description}. */
    static String errorLine(StatusRuntimeException failure) {
        return "error: " + failure.getStatus().getCode()
                + (failure.getStatus().getDescription() == null
                        ? ""
                        : ": " + failure.getStatus().getDescription());
    }
}
