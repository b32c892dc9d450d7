package dev.grpcops.cli;

import com.google.gson.Gson;
import dev.grpcops.proto.whoami.v1.WhoAmIGrpc;
import dev.grpcops.proto.whoami.v1.WhoRequest;
import io.grpc.ConnectivityState;
import io.grpc.ManagedChannel;
import io.grpc.StatusRuntimeException;
import java.io.PrintWriter;
import java.time.Duration;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;

@Command(
        name = "spread",
        mixinStandardHelpOptions = true,
        description = {
            "Calls Who N times on one channel and prints which pod answered how often, as JSON.",
            "Exits 1 if any call failed (the failures go to stderr)."
        })
final class SpreadCommand implements Callable<Integer> {

    private static final Duration SETTLE = Duration.ofMillis(200);

    @Parameters(paramLabel = "TARGET", description = "host:port, dns:///name:port, or a list a:p,b:p,c:p")
    String target;

    @Option(names = "-n", defaultValue = "60", description = "how many calls (default: ${DEFAULT-VALUE})")
    int calls;

    @Option(
            names = "--config",
            defaultValue = "pinned",
            description = "channel config: ${COMPLETION-CANDIDATES} (default: ${DEFAULT-VALUE})")
    Targets.ChannelConfig config;

    @Option(names = "--timeout", defaultValue = "3s", description = "deadline of each call (default: ${DEFAULT-VALUE})")
    Duration timeout;

    @Option(names = "--interval", defaultValue = "0ms", description = "pause between calls (default: ${DEFAULT-VALUE})")
    Duration interval;

    @Spec
    CommandSpec spec;

    /**
     * Counting starts once the channel is connected, and a moment later, so that with several
     * addresses the first one to connect does not take the first calls alone.
     */
    private void awaitConnected(ManagedChannel channel) throws InterruptedException {
        CountDownLatch ready = new CountDownLatch(1);
        notifyWhenReady(channel, channel.getState(true), ready);
        ready.await(timeout.toMillis(), TimeUnit.MILLISECONDS);
        Thread.sleep(SETTLE.toMillis());
    }

    private static void notifyWhenReady(ManagedChannel channel, ConnectivityState state, CountDownLatch ready) {
        if (state == ConnectivityState.READY) {
            ready.countDown();
            return;
        }
        channel.notifyWhenStateChanged(state, () -> notifyWhenReady(channel, channel.getState(true), ready));
    }

    @Override
    public Integer call() throws InterruptedException {
        if (calls < 1) {
            throw new IllegalArgumentException("-n must be at least 1, got " + calls);
        }
        Map<String, Integer> pods = new TreeMap<>();
        Map<String, Integer> failures = new TreeMap<>();
        ManagedChannel channel = Targets.channel(target, config);
        try {
            awaitConnected(channel);
            WhoAmIGrpc.WhoAmIBlockingStub whoami = WhoAmIGrpc.newBlockingStub(channel);
            for (int i = 0; i < calls; i++) {
                if (i > 0 && !interval.isZero()) {
                    Thread.sleep(interval.toMillis());
                }
                try {
                    String pod = whoami.withDeadlineAfter(timeout.toMillis(), TimeUnit.MILLISECONDS)
                            .who(WhoRequest.getDefaultInstance())
                            .getPod();
                    pods.merge(pod, 1, Integer::sum);
                } catch (StatusRuntimeException e) {
                    failures.merge(e.getStatus().getCode().name(), 1, Integer::sum);
                }
            }
        } finally {
            channel.shutdownNow();
        }
        PrintWriter out = spec.commandLine().getOut();
        out.println(new Gson().toJson(pods));
        out.flush();
        if (!failures.isEmpty()) {
            spec.commandLine().getErr().println("failed calls: " + new Gson().toJson(failures));
            return 1;
        }
        return 0;
    }
}
