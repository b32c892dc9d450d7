package dev.grpcops.cli;

import io.grpc.ManagedChannel;
import io.grpc.StatusRuntimeException;
import io.grpc.health.v1.HealthCheckRequest;
import io.grpc.health.v1.HealthCheckResponse.ServingStatus;
import io.grpc.health.v1.HealthGrpc;
import java.time.Duration;
import java.util.concurrent.Callable;
import java.util.concurrent.TimeUnit;
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
        ManagedChannel channel = Targets.channel(target, Targets.ChannelConfig.pinned);
        try {
            ServingStatus status = HealthGrpc.newBlockingStub(channel)
                    .withDeadlineAfter(timeout.toMillis(), TimeUnit.MILLISECONDS)
                    .check(HealthCheckRequest.newBuilder().setService(service).build())
                    .getStatus();
            spec.commandLine().getOut().println(status);
            spec.commandLine().getOut().flush();
            return status == ServingStatus.SERVING ? 0 : 1;
        } catch (StatusRuntimeException e) {
            spec.commandLine().getErr().println("error: " + e.getStatus().getCode()
                    + (e.getStatus().getDescription() == null ? "" : ": " + e.getStatus().getDescription()));
            return 1;
        } finally {
            channel.shutdownNow();
        }
    }
}
