package dev.grpcops.cli;

import io.grpc.ManagedChannel;
import io.grpc.health.v1.HealthCheckRequest;
import io.grpc.health.v1.HealthCheckResponse;
import io.grpc.health.v1.HealthGrpc;
import java.io.PrintWriter;
import java.time.Instant;
import java.util.Iterator;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;

@Command(
        name = "watch",
        mixinStandardHelpOptions = true,
        description = {
            "Streams a health name's status: one timestamped line now and one per change,",
            "until interrupted (Ctrl-C) or the server ends the stream (exit 1)."
        })
final class WatchCommand implements Callable<Integer> {

    @Parameters(paramLabel = "TARGET", description = "host:port, dns:///name:port, or a list a:p,b:p,c:p")
    String target;

    @Option(names = "--service", defaultValue = "", description = "health name to watch (default: \"\", the process)")
    String service;

    @Spec
    CommandSpec spec;

    @Override
    public Integer call() {
        ManagedChannel channel = Targets.channel(target, Targets.ChannelConfig.pinned);
        Runtime.getRuntime().addShutdownHook(new Thread(channel::shutdownNow));
        PrintWriter out = spec.commandLine().getOut();
        try {
            Iterator<HealthCheckResponse> updates = HealthGrpc.newBlockingStub(channel)
                    .watch(HealthCheckRequest.newBuilder().setService(service).build());
            while (updates.hasNext()) {
                out.println(Instant.now() + " " + updates.next().getStatus());
                out.flush();
            }
            spec.commandLine().getErr().println("error: the server ended the stream");
            return 1;
        } finally {
            channel.shutdownNow();
        }
    }
}
