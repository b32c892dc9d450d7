package dev.grpcops.cli;

import com.google.gson.Gson;
import dev.grpcops.admin.AdminCredentials;
import dev.grpcops.proto.whoami.v1.DrainReply;
import dev.grpcops.proto.whoami.v1.DrainRequest;
import dev.grpcops.proto.whoami.v1.WhoAmIGrpc;
import io.grpc.ManagedChannel;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.Callable;
import java.util.concurrent.TimeUnit;
import java.util.function.BiFunction;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;

/** Drain and Resume: one admin call to one pod, with the token from GRPCOPS_ADMIN_TOKEN. */
abstract class AdminCall implements Callable<Integer> {

    static final String TOKEN_VARIABLE = "GRPCOPS_ADMIN_TOKEN";

    @Parameters(paramLabel = "TARGET", description = "the pod: host:port")
    String target;

    @Option(names = "--timeout", defaultValue = "3s", description = "deadline of the call (default: ${DEFAULT-VALUE})")
    Duration timeout;

    @Spec
    CommandSpec spec;

    /** Reads the token; tests give their own. */
    Map<String, String> environment = System.getenv();

    abstract BiFunction<WhoAmIGrpc.WhoAmIBlockingStub, DrainRequest, DrainReply> operation();

    @Override
    public Integer call() {
        String token = environment.get(TOKEN_VARIABLE);
        if (token == null || token.isBlank()) {
            spec.commandLine().getErr().println("error: set " + TOKEN_VARIABLE + " to the services' admin token");
            return 2;
        }
        ManagedChannel channel = Targets.channel(target, Targets.ChannelConfig.pinned);
        try {
            WhoAmIGrpc.WhoAmIBlockingStub stub = WhoAmIGrpc.newBlockingStub(channel)
                    .withInterceptors(AdminCredentials.bearer(token))
                    .withDeadlineAfter(timeout.toMillis(), TimeUnit.MILLISECONDS);
            DrainReply reply = operation().apply(stub, DrainRequest.getDefaultInstance());
            Map<String, String> printed = new LinkedHashMap<>();
            printed.put("pod", reply.getPod());
            printed.put("status", reply.getStatus());
            spec.commandLine().getOut().println(new Gson().toJson(printed));
            spec.commandLine().getOut().flush();
            return 0;
        } finally {
            channel.shutdownNow();
        }
    }
}
