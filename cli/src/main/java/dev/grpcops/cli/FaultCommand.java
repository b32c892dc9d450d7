package dev.grpcops.cli;

import com.google.gson.GsonBuilder;
import dev.grpcops.admin.AdminCredentials;
import dev.grpcops.proto.fault.v1.FaultSpec;
import dev.grpcops.proto.fault.v1.FaultState;
import dev.grpcops.proto.fault.v1.FaultsGrpc;
import dev.grpcops.proto.fault.v1.GetFaultsRequest;
import io.grpc.ManagedChannel;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.Callable;
import java.util.concurrent.TimeUnit;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;

@Command(
        name = "fault",
        mixinStandardHelpOptions = true,
        description = {
            "Makes one replica slow, stalling, busy or failing on purpose, or clears what it injects.",
            "Without an option it shows what the replica injects now. Changing it needs GRPCOPS_ADMIN_TOKEN.",
            "Each change replaces the whole set: --delay 200ms --error-ratio 0.1 sets both, and clears a stall."
        })
final class FaultCommand implements Callable<Integer> {

    @Parameters(paramLabel = "TARGET", description = "the replica: host:port")
    String target;

    @Option(names = "--delay", paramLabel = "D", description = "extra delay before every answer, e.g. 200ms")
    Duration delay;

    @Option(
            names = "--stall",
            paramLabel = "D/P",
            description = "answers held for D at the start of every P, e.g. 200ms/1s (a periodic pause)")
    String stall;

    @Option(
            names = "--work",
            paramLabel = "D",
            description =
                    "CPU work before every call, e.g. 2ms: the replica's capacity falls (--delay only holds answers)")
    Duration work;

    @Option(names = "--error-ratio", paramLabel = "R", description = "share of calls failed at once, 0-1")
    Double errorRatio;

    @Option(
            names = "--error-code",
            paramLabel = "CODE",
            description = "what they fail with: UNAVAILABLE (default: a replica down), INTERNAL, UNKNOWN or"
                    + " DATA_LOSS (a broken replica), RESOURCE_EXHAUSTED (shedding)")
    String errorCode;

    @Option(names = "--clear", description = "inject nothing")
    boolean clear;

    @Option(names = "--timeout", defaultValue = "3s", description = "deadline of the call (default: ${DEFAULT-VALUE})")
    Duration timeout;

    @Spec
    CommandSpec spec;

    /** Reads the token; tests give their own. */
    Map<String, String> environment = System.getenv();

    @Override
    public Integer call() {
        boolean anyFault = delay != null || stall != null || work != null || errorRatio != null || errorCode != null;
        boolean change = clear || anyFault;
        if (clear && anyFault) {
            spec.commandLine().getErr().println("error: --clear takes no other fault option");
            return 2;
        }
        FaultSpec.Builder faults = FaultSpec.newBuilder();
        if (delay != null) {
            faults.setDelayMs(delay.toMillis());
        }
        if (stall != null) {
            String[] parts = stall.split("/", -1);
            if (parts.length != 2) {
                spec.commandLine().getErr().println("error: --stall takes D/P, e.g. 200ms/1s, got '" + stall + "'");
                return 2;
            }
            try {
                faults.setStallMs(Durations.parse(parts[0]).toMillis())
                        .setStallEveryMs(Durations.parse(parts[1]).toMillis());
            } catch (IllegalArgumentException e) {
                spec.commandLine().getErr().println("error: --stall: " + e.getMessage());
                return 2;
            }
        }
        if (work != null) {
            faults.setWorkMs(work.toMillis());
        }
        if (errorRatio != null) {
            faults.setErrorRatio(errorRatio);
        }
        if (errorCode != null) {
            if (errorRatio == null) {
                spec.commandLine().getErr().println("error: --error-code goes with --error-ratio");
                return 2;
            }
            faults.setErrorCode(errorCode.trim().toUpperCase(java.util.Locale.ROOT));
        }
        String token = environment.get(AdminCall.TOKEN_VARIABLE);
        if (change && (token == null || token.isBlank())) {
            spec.commandLine()
                    .getErr()
                    .println("error: set " + AdminCall.TOKEN_VARIABLE + " to the services' admin token");
            return 2;
        }
        ManagedChannel channel = Targets.channel(target, Targets.ChannelConfig.pinned);
        try {
            FaultsGrpc.FaultsBlockingStub stub =
                    FaultsGrpc.newBlockingStub(channel).withDeadlineAfter(timeout.toMillis(), TimeUnit.MILLISECONDS);
            FaultState state = change
                    ? stub.withInterceptors(AdminCredentials.bearer(token)).set(faults.build())
                    : stub.get(GetFaultsRequest.getDefaultInstance());
            Map<String, Object> printed = new LinkedHashMap<>();
            printed.put("replica", state.getReplica());
            printed.put("delay_ms", state.getFaults().getDelayMs());
            printed.put("stall_ms", state.getFaults().getStallMs());
            printed.put("stall_every_ms", state.getFaults().getStallEveryMs());
            printed.put("work_ms", state.getFaults().getWorkMs());
            printed.put("error_ratio", state.getFaults().getErrorRatio());
            printed.put("error_code", state.getFaults().getErrorCode());
            spec.commandLine().getOut().println(new GsonBuilder().create().toJson(printed));
            spec.commandLine().getOut().flush();
            return 0;
        } finally {
            channel.shutdownNow();
        }
    }
}
