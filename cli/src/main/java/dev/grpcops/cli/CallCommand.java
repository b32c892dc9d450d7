package dev.grpcops.cli;

import com.google.protobuf.InvalidProtocolBufferException;
import com.google.protobuf.Message;
import com.google.protobuf.util.JsonFormat;
import io.grpc.CallOptions;
import io.grpc.ManagedChannel;
import io.grpc.Metadata;
import io.grpc.stub.ClientCalls;
import io.grpc.stub.MetadataUtils;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.concurrent.TimeUnit;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;

@Command(
        name = "call",
        mixinStandardHelpOptions = true,
        description = {
            "One call of one of the suite's methods: the request as protobuf JSON in, the answer as JSON out.",
            "Exits 0 with the answer on stdout; 1 with the status on stderr when the call fails; 2 for bad arguments.",
            "Methods: chain.v1.Edge/Checkout, chain.v1.Pricing/Quote, chain.v1.Stock/Check, chain.v1.Stock/Stats, "
                    + "grpcops.v1.WhoAmI/Who, grpcops.v1.Faults/Get (or Checkout, Quote, Check, Stats, Who, Get)."
        },
        footer = {
            "",
            "Example:",
            "  grpcops call 127.0.0.1:50063 Checkout '{\"skus\":[\"a\",\"b\"],\"slow_skus\":[\"b\"]}' --deadline 1s"
        })
final class CallCommand implements Callable<Integer> {

    @Parameters(index = "0", paramLabel = "TARGET", description = "host:port, dns:///name:port, or a list a:p,b:p,c:p")
    String target;

    @Parameters(index = "1", paramLabel = "METHOD", description = "full or short name, e.g. Checkout")
    String method;

    @Parameters(
            index = "2",
            paramLabel = "JSON",
            arity = "0..1",
            description = "the request (default: the empty request)")
    String json;

    @Option(
            names = "--deadline",
            defaultValue = "10s",
            paramLabel = "DURATION",
            description = "deadline of the call (default: ${DEFAULT-VALUE})")
    Duration deadline;

    @Option(
            names = {"-H", "--header"},
            paramLabel = "KEY=VALUE",
            description = "metadata sent with the call, repeatable (e.g. -H x-grpcops-caller=me)")
    List<String> headers = new ArrayList<>();

    @Spec
    CommandSpec spec;

    @Override
    public Integer call() throws InvalidProtocolBufferException, InterruptedException {
        Methods.Method called;
        Message request;
        Metadata metadata = new Metadata();
        try {
            called = Methods.find(method);
            request = called.request(json);
            for (String header : headers) {
                int equals = header.indexOf('=');
                if (equals <= 0) {
                    throw new IllegalArgumentException("--header takes KEY=VALUE, got '" + header + "'");
                }
                metadata.put(
                        Metadata.Key.of(header.substring(0, equals).trim(), Metadata.ASCII_STRING_MARSHALLER),
                        header.substring(equals + 1).trim());
            }
        } catch (IllegalArgumentException | InvalidProtocolBufferException e) {
            spec.commandLine().getErr().println("error: " + e.getMessage());
            return 2;
        }
        ManagedChannel channel = Targets.channel(target, Targets.ChannelConfig.pinned);
        try {
            // The deadline is the call's: connecting (a cold JVM's first connection) comes before it.
            LoadRun.connect(channel);
            Message answer = ClientCalls.blockingUnaryCall(
                    io.grpc.ClientInterceptors.intercept(channel, MetadataUtils.newAttachHeadersInterceptor(metadata)),
                    called.descriptor(),
                    CallOptions.DEFAULT.withDeadlineAfter(deadline.toNanos(), TimeUnit.NANOSECONDS),
                    request);
            spec.commandLine()
                    .getOut()
                    .println(JsonFormat.printer().preservingProtoFieldNames().print(answer));
            spec.commandLine().getOut().flush();
            return 0;
        } finally {
            channel.shutdownNow();
        }
    }
}
