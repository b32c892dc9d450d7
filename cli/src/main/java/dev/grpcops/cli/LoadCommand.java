package dev.grpcops.cli;

import com.google.protobuf.InvalidProtocolBufferException;
import com.google.protobuf.Message;
import io.grpc.ConnectivityState;
import io.grpc.ManagedChannel;
import io.grpc.Metadata;
import java.io.PrintWriter;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;
import picocli.CommandLine.ArgGroup;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;

@Command(
        name = "load",
        mixinStandardHelpOptions = true,
        sortOptions = false,
        description = {
            "Calls one of the suite's methods under load and reports status counts and latency percentiles.",
            "",
            "--rate N is an open loop: N calls per second are started on schedule whatever the answers, "
                    + "and latency counts from each call's intended send time (coordinated omission corrected), "
                    + "so a slow server is not hidden by a slow client. At most --max-outstanding calls are "
                    + "outstanding: an intended send beyond it is not made, and counts as CLIENT_OVERLOADED "
                    + "in the status counts (and in sent).",
            "--concurrency N is a closed loop: N calls always outstanding, latency from the actual send.",
            "",
            "Latency covers every call made, whatever its status. Throughput is calls made and ended per "
                    + "second over the measured period (after the warm-up, up to the end of its last call). "
                    + "Calls outstanding when the load ends get until their --deadline (10s without one), then "
                    + "are cancelled and counted as CANCELLED; a --concurrency run with -n whose calls all go "
                    + "unanswered that long stops starting calls.",
            "",
            "The report goes to stdout: a table, or one JSON object with --json. A progress line goes to "
                    + "stderr once a second when stderr is a terminal, or with --progress.",
            "Exit: 0 when the run completed, whatever statuses the calls got; 1 if the target could not be "
                    + "reached (nothing is sent); 2 for bad arguments.",
            ""
        },
        footer = {
            "",
            "Example:",
            "  grpcops load 127.0.0.1:50061 --method Check --data '{\"sku\":\"a\"}' \\",
            "      --rate 200 --duration 10s --warmup 2s -H x-grpcops-caller=noisy --json"
        })
final class LoadCommand implements Callable<Integer> {

    @Parameters(paramLabel = "TARGET", description = "host:port, dns:///name:port, or a list a:p,b:p,c:p")
    String target;

    @Option(
            names = "--method",
            required = true,
            paramLabel = "METHOD",
            description = "full or short name: chain.v1.Edge/Checkout, chain.v1.Pricing/Quote, chain.v1.Stock/Check, "
                    + "chain.v1.Stock/Stats, grpcops.v1.WhoAmI/Who (or Checkout, Quote, Check, Stats, Who)")
    String method;

    @Option(
            names = "--data",
            paramLabel = "JSON",
            description = "the request as protobuf JSON (default: the empty request)")
    String data;

    @ArgGroup(exclusive = true, multiplicity = "1")
    Mode mode;

    @ArgGroup(exclusive = true, multiplicity = "1")
    Length length;

    @Option(names = "--deadline", paramLabel = "DURATION", description = "deadline of each call (default: none)")
    Duration deadline;

    @Option(
            names = {"-H", "--header"},
            paramLabel = "KEY=VALUE",
            description = "metadata sent with every call, repeatable (e.g. -H x-grpcops-caller=noisy)")
    List<String> headers = new ArrayList<>();

    @Option(
            names = "--warmup",
            defaultValue = "0s",
            paramLabel = "DURATION",
            description = "run the same load this long first and discard its results (default: ${DEFAULT-VALUE})")
    Duration warmUp;

    @Option(
            names = "--connections",
            defaultValue = "1",
            paramLabel = "N",
            description = "channels (connections) the calls are spread over in turn (default: ${DEFAULT-VALUE})")
    int connections;

    @Option(
            names = "--config",
            defaultValue = "pinned",
            description = "channel config: ${COMPLETION-CANDIDATES} (default: ${DEFAULT-VALUE})")
    Targets.ChannelConfig config;

    @Option(
            names = "--max-outstanding",
            defaultValue = "10000",
            paramLabel = "N",
            description = "--rate only: most calls outstanding at once; sends beyond count as CLIENT_OVERLOADED "
                    + "(default: ${DEFAULT-VALUE})")
    int maxOutstanding;

    @Option(names = "--json", description = "print the report as one JSON object")
    boolean json;

    @Option(names = "--progress", description = "print the progress line even when stderr is not a terminal")
    boolean progress;

    @Spec
    CommandSpec spec;

    static final class Mode {
        @Option(
                names = "--rate",
                required = true,
                paramLabel = "N",
                description = "open loop: calls started per second")
        Integer rate;

        @Option(
                names = "--concurrency",
                required = true,
                paramLabel = "N",
                description = "closed loop: calls always outstanding")
        Integer concurrency;
    }

    static final class Length {
        @Option(names = "--duration", required = true, paramLabel = "DURATION", description = "how long, e.g. 10s, 1m")
        Duration duration;

        @Option(names = "-n", required = true, paramLabel = "COUNT", description = "how many calls")
        Long count;
    }

    @Override
    public Integer call() throws InterruptedException {
        validate();
        Methods.Method called = method();
        Message request = request(called);
        Metadata metadata = metadata();
        PrintWriter err = spec.commandLine().getErr();
        List<ManagedChannel> channels = new ArrayList<>();
        try {
            for (int i = 0; i < connections; i++) {
                channels.add(Targets.channel(target, config));
            }
            for (ManagedChannel channel : channels) {
                ConnectivityState state = LoadRun.connect(channel);
                if (state != ConnectivityState.READY) {
                    err.println("error: could not reach " + target + " (connection " + state + " after up to "
                            + LoadRun.CONNECT_TIMEOUT.toSeconds() + "s); no calls made");
                    err.flush();
                    return 1;
                }
            }
            LoadCaller caller = new LoadCaller(channels, called, request, metadata, deadline);
            LoadRun.Shape shape = new LoadRun.Shape(
                    mode.rate,
                    mode.concurrency,
                    maxOutstanding,
                    warmUp,
                    length.duration,
                    length.count == null ? 0 : length.count);
            LoadRun.Result result = new LoadRun(caller, shape, deadline, err, progress).run();
            LoadReport report = LoadReport.of(
                    target, called.fullName(), mode.rate, mode.concurrency, result.stats(), result.endNanos());
            if (json) {
                report.printJson(spec.commandLine().getOut());
            } else {
                report.printText(spec.commandLine().getOut());
            }
            return 0;
        } finally {
            channels.forEach(ManagedChannel::shutdownNow);
        }
    }

    private void validate() {
        positive("--rate", mode.rate);
        positive("--concurrency", mode.concurrency);
        positive("-n", length.count);
        positive("--connections", (long) connections);
        positive("--max-outstanding", (long) maxOutstanding);
        if (length.duration != null && length.duration.isZero()) {
            throw usage("--duration must be more than 0s");
        }
        if (deadline != null && deadline.isZero()) {
            throw usage("--deadline must be more than 0ms (leave it out for no deadline)");
        }
        try {
            Targets.grpcTarget(target);
        } catch (IllegalArgumentException e) {
            throw usage("TARGET: " + e.getMessage());
        }
    }

    private void positive(String option, Number value) {
        if (value != null && value.longValue() < 1) {
            throw usage(option + " must be at least 1, got " + value);
        }
    }

    private Methods.Method method() {
        try {
            return Methods.find(method);
        } catch (IllegalArgumentException e) {
            throw usage("--method: " + e.getMessage());
        }
    }

    private Message request(Methods.Method called) {
        try {
            return called.request(data);
        } catch (InvalidProtocolBufferException | RuntimeException e) {
            throw usage("--data is not a "
                    + called.emptyRequest().getDescriptorForType().getFullName() + " in protobuf JSON: "
                    + e.getMessage());
        }
    }

    private Metadata metadata() {
        Metadata metadata = new Metadata();
        for (String header : headers) {
            int equals = header.indexOf('=');
            if (equals < 1) {
                throw usage("-H '" + header + "' is not key=value");
            }
            String key = header.substring(0, equals).trim();
            String value = header.substring(equals + 1);
            if (key.endsWith(Metadata.BINARY_HEADER_SUFFIX)) {
                throw usage("-H '" + header + "': binary (-bin) headers are not supported");
            }
            if (!value.chars().allMatch(c -> c >= 0x20 && c <= 0x7e)) {
                throw usage("-H '" + header + "': the value must be printable ASCII");
            }
            try {
                metadata.put(Metadata.Key.of(key, Metadata.ASCII_STRING_MARSHALLER), value);
            } catch (IllegalArgumentException e) {
                throw usage("-H '" + header + "': " + e.getMessage());
            }
        }
        return metadata;
    }

    private ParameterException usage(String message) {
        return new ParameterException(spec.commandLine(), message);
    }
}
