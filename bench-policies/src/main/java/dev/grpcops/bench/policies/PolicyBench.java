package dev.grpcops.bench.policies;

import io.grpc.ConnectivityState;
import io.grpc.ManagedChannel;
import io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;

/**
 * How client balancing policies cope with one bad replica of three, for a fan-out workload, side by
 * side in one JVM: three Stock replicas on 127.0.0.2-4 (127.0.0.3 the bad one), and for each policy
 * a warm-up, then every {@link Fault} on a fresh channel (no history carries over from one to the
 * next), an open loop of checkouts of five parallel Checks each. Prints one Markdown table.
 *
 * <pre>
 * PolicyBench [--rate 200] [--seconds 15] [--warmup 5] [--service-ms 5] [--out FILE] [--only a,b]
 * </pre>
 *
 * scripts/bench-policies.sh builds and runs it.
 */
public final class PolicyBench {

    private static final List<String> HOSTS = List.of("127.0.0.2", "127.0.0.3", "127.0.0.4");
    private static final int BAD = 1;

    private PolicyBench() {}

    record Options(double rate, double seconds, double warmup, long serviceMs, Path out, List<Policy> policies) {}

    record Row(Policy policy, Fault fault, Checkouts.Result result, double badShare) {}

    public static void main(String[] args) throws Exception {
        Options options;
        try {
            options = parse(args);
        } catch (IllegalArgumentException e) {
            System.err.println("policy-bench: " + e.getMessage());
            System.err.println("usage: PolicyBench [--rate N] [--seconds D] [--warmup W] [--service-ms N] [--out FILE]"
                    + " [--only " + Policy.ALL.stream().map(Policy::name).collect(Collectors.joining(",")) + "]");
            System.exit(2);
            return;
        }
        Instant started = Instant.now().truncatedTo(ChronoUnit.SECONDS);
        List<Replica> replicas = new ArrayList<>();
        List<Row> rows = new ArrayList<>();
        try {
            for (String host : HOSTS) {
                replicas.add(Replica.start(host, options.serviceMs));
            }
            String target = "list:///" + replicas.stream().map(Replica::address).collect(Collectors.joining(","));
            // Once, so that the first policy is not the one to pay for the JIT compiling the client and servers.
            log("JVM warm-up %.0f s with round_robin, no fault", options.warmup);
            run(Policy.ROUND_ROBIN, target, options.rate, options.warmup);
            for (Policy policy : options.policies) {
                rows.addAll(measure(policy, target, replicas, options));
            }
        } finally {
            replicas.forEach(Replica::stop);
        }
        String report = report(options, started, args, rows);
        System.out.print(report);
        if (options.out != null) {
            Files.writeString(options.out, report);
            System.err.println("policy-bench: report written to " + options.out);
        }
        // The channels' shared Netty threads would keep the JVM a while; nothing is left to wait for.
        System.exit(0);
    }

    private static List<Row> measure(Policy policy, String target, List<Replica> replicas, Options options)
            throws InterruptedException {
        log("%s: warm-up %.0f s, no fault", policy.name(), options.warmup);
        replicas.get(BAD).fault(Fault.NONE);
        run(policy, target, options.rate, options.warmup);
        List<Row> rows = new ArrayList<>();
        for (Fault fault : Fault.values()) {
            replicas.get(BAD).fault(fault);
            replicas.forEach(Replica::takeReceived);
            Checkouts.Result result = run(policy, target, options.rate, options.seconds);
            long[] received = replicas.stream().mapToLong(Replica::takeReceived).toArray();
            long all = Arrays.stream(received).sum();
            Row row = new Row(policy, fault, result, all == 0 ? Double.NaN : (double) received[BAD] / all);
            log(
                    "%s, %s: p50 %.1f ms, p99 %.1f ms, %.1f %% complete, bad replica %.1f %% of calls",
                    policy.name(),
                    fault.label,
                    result.percentileMs(0.50),
                    result.percentileMs(0.99),
                    result.completePercent(),
                    100 * row.badShare);
            rows.add(row);
        }
        replicas.get(BAD).fault(Fault.NONE);
        return rows;
    }

    /** An open loop on a fresh channel, once it is connected; the channel goes with it. */
    private static Checkouts.Result run(Policy policy, String target, double rate, double seconds)
            throws InterruptedException {
        ManagedChannel channel = NettyChannelBuilder.forTarget(target)
                .usePlaintext()
                .directExecutor()
                .defaultServiceConfig(policy.serviceConfig())
                .build();
        try {
            awaitReady(channel, policy);
            return Checkouts.run(channel, rate, seconds);
        } finally {
            channel.shutdownNow();
            channel.awaitTermination(5, TimeUnit.SECONDS);
        }
    }

    /**
     * So that the first checkouts measure the policy, not the connecting: READY once one replica's
     * connection is, then a moment for the others' (on loopback, a few ms), without calls, so the
     * policy learns nothing before the clock starts.
     */
    private static void awaitReady(ManagedChannel channel, Policy policy) throws InterruptedException {
        long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        ConnectivityState state;
        while ((state = channel.getState(true)) != ConnectivityState.READY) {
            if (state == ConnectivityState.TRANSIENT_FAILURE || System.nanoTime() > end) {
                throw new IllegalStateException(policy.name() + ": the channel is " + state
                        + " (is the policy on the class path? does 127.0.0.x bind here?)");
            }
            CountDownLatch changed = new CountDownLatch(1);
            channel.notifyWhenStateChanged(state, changed::countDown);
            changed.await(100, TimeUnit.MILLISECONDS);
        }
        Thread.sleep(100);
    }

    private static String report(Options options, Instant started, String[] args, List<Row> rows) {
        StringBuilder out = new StringBuilder();
        out.append("## Balancing policies, one bad replica of three, ")
                .append(started)
                .append("\n\n");
        out.append("- command: `PolicyBench ").append(String.join(" ", args)).append("`\n");
        out.append(String.format(
                Locale.ROOT,
                "- machine: %d CPUs, Java %s; everything in one JVM on loopback%n",
                Runtime.getRuntime().availableProcessors(),
                System.getProperty("java.version")));
        out.append(String.format(
                Locale.ROOT,
                "- replicas: Stock on %s; each answers Check after %d ms without"
                        + " holding a thread, and reports per-call ORCA load (qps, eps, application_utilization ="
                        + " mean calls in flight / 100) over the last second, refreshed every 100 ms%n",
                String.join(", ", HOSTS),
                options.serviceMs));
        out.append(String.format(
                Locale.ROOT,
                "- load: open loop, %.0f checkouts/s; a checkout is %d parallel Check"
                        + " calls, deadline %d ms each; its latency is its slowest call's end from its intended start"
                        + " (coordinated omission corrected), over every checkout, complete or not; complete: all %d OK%n",
                options.rate,
                Checkouts.SKUS.size(),
                Checkouts.DEADLINE_MS,
                Checkouts.SKUS.size()));
        out.append(String.format(
                Locale.ROOT,
                "- per policy: warm-up %.0f s without fault (after one such JVM warm-up"
                        + " with round_robin before the first), then each scenario %.0f s on a fresh channel (no history"
                        + " carries over; the clock starts once it is connected)%n",
                options.warmup,
                options.seconds));
        out.append("- scenarios, faults on ")
                .append(HOSTS.get(BAD))
                .append(" only: ")
                .append(Arrays.stream(Fault.values())
                        .map(f -> f.label + " (" + f.description + ")")
                        .collect(Collectors.joining("; ")))
                .append("\n\n");
        out.append("| policy | scenario | p50 ms | p99 ms | p99.9 ms | complete % | bad replica's share of calls |\n");
        out.append("|---|---|---:|---:|---:|---:|---:|\n");
        for (Row row : rows) {
            Checkouts.Result r = row.result;
            out.append(String.format(
                    Locale.ROOT,
                    "| %s | %s | %.1f | %.1f | %.1f | %.2f | %.1f %% |%n",
                    row.policy.name(),
                    row.fault.label,
                    r.percentileMs(0.50),
                    r.percentileMs(0.99),
                    r.percentileMs(0.999),
                    r.completePercent(),
                    100 * row.badShare));
        }
        out.append("\nPolicies (the `loadBalancingConfig` entry;")
                .append(" \"+od\": under `outlier_detection_experimental`):\n\n");
        for (Policy policy : options.policies) {
            out.append("- ")
                    .append(policy.name())
                    .append(": `")
                    .append(policy.json())
                    .append("`\n");
        }
        List<String> notes = new ArrayList<>();
        for (Row row : rows) {
            Checkouts.Result r = row.result;
            if (r.unfinished() > 0) {
                notes.add(row.policy.name() + ", " + row.fault.label + ": " + r.unfinished()
                        + " checkouts never finished (left out of the percentiles)");
            }
            // A late sender is charged in the latencies; much of it means the machine, not the policy, was slow.
            if (r.maxSendLagNanos() > TimeUnit.MILLISECONDS.toNanos(20)) {
                notes.add(String.format(
                        Locale.ROOT,
                        "%s, %s: the sender started a checkout up to %.0f ms late" + " (busy machine?)",
                        row.policy.name(),
                        row.fault.label,
                        r.maxSendLagNanos() / 1e6));
            }
        }
        if (!notes.isEmpty()) {
            out.append("\nNotes:\n\n");
            notes.forEach(note -> out.append("- ").append(note).append("\n"));
        }
        return out.toString();
    }

    static Options parse(String[] args) {
        double rate = 200;
        double seconds = 15;
        double warmup = 5;
        long serviceMs = 5;
        Path out = null;
        List<Policy> policies = Policy.ALL;
        for (int i = 0; i < args.length; i += 2) {
            if (i + 1 >= args.length) {
                throw new IllegalArgumentException(args[i] + " needs a value");
            }
            String value = args[i + 1];
            switch (args[i]) {
                case "--rate" -> rate = number(args[i], value, Double.MIN_VALUE);
                case "--seconds" -> seconds = number(args[i], value, Double.MIN_VALUE);
                case "--warmup" -> warmup = number(args[i], value, 0);
                case "--service-ms" -> serviceMs = (long) number(args[i], value, 0);
                case "--out" -> out = Path.of(value);
                case "--only" ->
                    policies = Arrays.stream(value.split(","))
                            .map(PolicyBench::policy)
                            .toList();
                default -> throw new IllegalArgumentException("unknown option: " + args[i]);
            }
        }
        return new Options(rate, seconds, warmup, serviceMs, out, policies);
    }

    private static Policy policy(String name) {
        return Policy.ALL.stream()
                .filter(p -> p.name().equals(name.trim()))
                .findFirst()
                .orElseThrow(() -> new IllegalArgumentException("unknown policy: " + name));
    }

    private static double number(String option, String value, double least) {
        try {
            double number = Double.parseDouble(value);
            if (number >= least && number < 1e9) {
                return number;
            }
        } catch (NumberFormatException e) {
            // said below
        }
        throw new IllegalArgumentException(
                option + " needs a " + (least > 0 ? "positive" : "non-negative") + " number, got " + value);
    }

    private static void log(String format, Object... args) {
        System.err.println("policy-bench: " + String.format(Locale.ROOT, format, args));
    }
}
