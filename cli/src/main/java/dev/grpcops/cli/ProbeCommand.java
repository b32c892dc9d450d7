package dev.grpcops.cli;

import dev.grpcops.lifecycle.HealthProbe;
import java.io.PrintWriter;
import java.time.Duration;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;

@Command(name = "probe", mixinStandardHelpOptions = true,
        description = {"One standard health Check, as kubelet's grpc probe makes it.",
            "Prints the status; exits 0 if SERVING, 1 otherwise (also when the call fails)."})
final class ProbeCommand implements Callable<Integer> {

    @Parameters(paramLabel = "TARGET", description = "host:port")
    String target;

    @Option(names = "--service", defaultValue = "", description = "health name (default: \"\", the process)")
    String service;

    @Option(names = "--timeout", defaultValue = "1s", description = "deadline of the check (default: ${DEFAULT-VALUE})")
    Duration timeout;

    @Spec
    CommandSpec spec;

    @Override
    public Integer call() {
        HealthProbe.Result result = HealthProbe.probe(Targets.grpcTarget(target), service, timeout);
        PrintWriter printer = result.serving() || !result.message().startsWith("error:")
                ? spec.commandLine().getOut() : spec.commandLine().getErr();
        printer.println(result.message());
        printer.flush();
        return result.serving() ? 0 : 1;
    }
}
