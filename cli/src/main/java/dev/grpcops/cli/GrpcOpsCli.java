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
                        command.getErr()
                                .println("error: " + rpc.getStatus().getCode()
                                        + (rpc.getStatus().getDescription() == null
                                                ? ""
                                                : ": " + rpc.getStatus().getDescription()));
                    } else {
                        command.getErr().println("error: " + failure.getMessage());
                    }
                    return 1;
                });
    }
}
