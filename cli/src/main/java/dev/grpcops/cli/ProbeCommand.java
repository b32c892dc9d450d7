package dev.grpcops.cli;

import java.io.PrintWriter;
import java.time.Duration;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;

@Command(
        name = "probe",
        mixinStandardHelpOptions = true,
        description = {
            "One standard health Check, as kubelet's grpc probe makes it.",
            "Prints the status; exits 0 if SERVING, 1 otherwise (also when the call fails).",
            "With --wait, checks every 20 ms until SERVING (and prints how long that took) or the wait is over."
        })
final class ProbeCommand implements Callable<Integer> {

    @Parameters(paramLabel = "TARGET", description = "host:port")
    String target;

    @Option(names = "--service", defaultValue = "", description = "health name (default: \"\", the process)")
    String service;

    @Option(names = "--timeout", defaultValue = "1s", description = "deadline of the check (default: ${DEFAULT-VALUE})")
    Duration timeout;

    @Option(
            names = "--wait",
            paramLabel = "DURATION",
            description = "check again every 20 ms until SERVING, for at most this long (e.g. 60s)")
    Duration wait;

    @Spec
    CommandSpec spec;

    @Override
    public Integer call() throws InterruptedException {
        long start = System.nanoTime();
        HealthProbe.Result result = HealthProbe.probe(Targets.grpcTarget(target), service, timeout);
        if (wait != null) {
            long end = start + wait.toNanos();
            while (!result.serving() && System.nanoTime() < end) {
                Thread.sleep(20); // the poll's interval, not a synchronisation
                result = HealthProbe.probe(Targets.grpcTarget(target), service, timeout);
            }
            if (result.serving()) {
                result = new HealthProbe.Result(
                        true,
                        result.message() + " after "
                                + java.util.concurrent.TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start)
                                + " ms");
            }
        }
        PrintWriter printer = result.serving() || !result.message().startsWith("error:")
                ? spec.commandLine().getOut()
                : spec.commandLine().getErr();
        printer.println(result.message());
        printer.flush();
        return result.serving() ? 0 : 1;
    }
}
