package dev.grpcops.cli;

import com.google.protobuf.InvalidProtocolBufferException;
import com.google.protobuf.Message;
import com.google.protobuf.util.JsonFormat;
import dev.grpcops.budget.LedgerLine;
import io.grpc.CallOptions;
import io.grpc.ManagedChannel;
import io.grpc.Metadata;
import io.grpc.StatusRuntimeException;
import io.grpc.stub.ClientCalls;
import io.grpc.stub.MetadataUtils;
import java.io.PrintWriter;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.Callable;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
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

    @Option(
            names = "--ledger",
            description =
                    "ask every hop for its line of the call's budget ledger (with the token in GRPCOPS_BUDGET_LEDGER_TOKEN)"
                            + " and print the waterfall on stderr: received, queued, handler, granted downstream, slack")
    boolean ledger;

    @Spec
    CommandSpec spec;

    /** Where --ledger reads the ledger token: the variable the services read it from too. */
    static final String LEDGER_TOKEN_VARIABLE = "GRPCOPS_BUDGET_LEDGER_TOKEN";

    /** Reads the token for --ledger; tests give their own. */
    Map<String, String> environment = System.getenv();

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
            if (ledger) {
                String token = environment.get(LEDGER_TOKEN_VARIABLE);
                if (token == null || token.isBlank()) {
                    throw new IllegalArgumentException(
                            "--ledger needs the services' ledger token in " + LEDGER_TOKEN_VARIABLE);
                }
                metadata.put(LedgerLine.KEY, token.strip());
            }
        } catch (IllegalArgumentException | InvalidProtocolBufferException e) {
            spec.commandLine().getErr().println("error: " + e.getMessage());
            return 2;
        }
        ManagedChannel channel = Targets.channel(target, Targets.ChannelConfig.pinned);
        try {
            // The deadline is the call's: connecting (a cold JVM's first connection) comes before it.
            LoadRun.connect(channel);
            AtomicReference<Metadata> trailers = new AtomicReference<>();
            Message answer;
            try {
                answer = ClientCalls.blockingUnaryCall(
                        io.grpc.ClientInterceptors.intercept(
                                channel,
                                MetadataUtils.newAttachHeadersInterceptor(metadata),
                                MetadataUtils.newCaptureMetadataInterceptor(new AtomicReference<>(), trailers)),
                        called.descriptor(),
                        CallOptions.DEFAULT.withDeadlineAfter(deadline.toNanos(), TimeUnit.NANOSECONDS),
                        request);
            } catch (StatusRuntimeException e) {
                if (!ledger) {
                    throw e;
                }
                // Where the budget went matters most when the call failed: the status, then the ledger.
                spec.commandLine().getErr().println(GrpcOpsCli.errorLine(e));
                printLedger(e.getTrailers());
                return 1;
            }
            spec.commandLine()
                    .getOut()
                    .println(JsonFormat.printer().preservingProtoFieldNames().print(answer));
            spec.commandLine().getOut().flush();
            if (ledger) {
                printLedger(trailers.get());
            }
            return 0;
        } finally {
            channel.shutdownNow();
        }
    }

    /** The waterfall, one hop per row, indented by its distance from the hop called. */
    private void printLedger(Metadata trailers) {
        PrintWriter err = spec.commandLine().getErr();
        List<LedgerLine> lines = new ArrayList<>();
        Iterable<String> values = trailers == null ? null : trailers.getAll(LedgerLine.KEY);
        int omitted = 0;
        if (values != null) {
            for (String value : values) {
                omitted += LedgerLine.omittedIn(value);
                LedgerLine.parse(value).ifPresent(lines::add);
            }
        }
        if (lines.isEmpty()) {
            err.println("no budget ledger came back: the hop called runs without grpcops' budget interceptors,"
                    + " or its admin token is not the one in " + AdminCall.TOKEN_VARIABLE);
            err.flush();
            return;
        }
        err.println("budget ledger, ms (queued: waiting for a seat; granted: the deadline handed downstream;"
                + " slack: left at the answer):");
        err.printf(
                Locale.ROOT, "%-28s %9s %8s %8s %9s %9s%n", "hop", "received", "queued", "handler", "granted", "slack");
        for (LedgerLine line : lines) {
            String hop = "  ".repeat(Math.max(0, line.depth())) + line.hop() + (line.defaulted() ? " (default)" : "");
            err.printf(
                    Locale.ROOT,
                    "%-28s %9.1f %8.1f %8.1f %9s %9.1f%n",
                    hop,
                    millis(line.received()),
                    millis(line.queued()),
                    millis(line.handler()),
                    line.granted().isZero() ? "-" : String.format(Locale.ROOT, "%.1f", millis(line.granted())),
                    millis(line.slack()));
        }
        if (omitted > 0) {
            err.println("... and " + omitted + " more rows not carried back (each hop passes back at most"
                    + " two dozen of its downstream calls' rows, to keep the trailers within what gRPC accepts)");
        }
        err.flush();
    }

    private static double millis(Duration duration) {
        return duration.toNanos() / 1e6;
    }
}
