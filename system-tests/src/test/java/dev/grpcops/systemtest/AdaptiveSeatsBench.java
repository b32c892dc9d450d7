package dev.grpcops.systemtest;

import dev.grpcops.proto.chain.v1.CheckoutRequest;
import dev.grpcops.proto.chain.v1.EdgeGrpc;
import dev.grpcops.proto.fault.v1.FaultSpec;
import io.grpc.ManagedChannel;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Duration;
import java.util.ArrayList;
import java.util.IntSummaryStatistics;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.stream.IntStream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Adaptive seats (design §19), measured: the chain as processes, a flood of Checkouts (no deadline,
 * one caller, {@code adaptive.inflight} in flight) beside a polite caller (20 Checkouts/s of 3
 * SKUs at a 1 s deadline), through six phases: the flood's first seconds ({@code adaptive.onset},
 * default 10 s), steady, Stock answering 200 ms late (a fault delay: held answers, Stock's capacity
 * unchanged), the delay off again, Stock spending 1 ms of CPU more on every call (fault work: its
 * capacity falls), and the work off again. Run three times, one after the other: admission with fixed
 * seats (the defaults); with {@code grpcops.admission.adaptive.enabled=true} and nothing else tuned
 * at every hop; and at Edge alone, the hop where calls enter ({@code adaptive.contenders} picks some,
 * and adds "fixed in arrival order": fixed seats with every queue first come, first served).
 * Per phase: the polite caller's complete share, latency and other outcomes, and each hop's seats
 * ({@code grpc_admission_limit_seats}, sampled every second: first, lowest, highest, last).
 *
 * <p>Sized by {@code adaptive.seconds} (per phase, default 20) and {@code adaptive.inflight}
 * (default 1000). Not a test: failsafe runs it only when named ({@code scripts/bench-adaptive.sh}).
 * The table is appended to target/adaptive-numbers.md.
 */
class AdaptiveSeatsBench {

    private static final Duration PHASE = Duration.ofSeconds(Long.getLong("adaptive.seconds", 20));
    private static final Duration ONSET = Duration.ofSeconds(Long.getLong("adaptive.onset", 10));
    /** The flood's deadline per Checkout in ms ({@code adaptive.flood-deadline-ms}); none by default. */
    private static final Duration FLOOD_DEADLINE = floodDeadline(Long.getLong("adaptive.flood-deadline-ms", 0));

    private static final int FLOOD = Integer.getInteger("adaptive.inflight", 1000);
    private static final Duration DEADLINE = Duration.ofSeconds(1);

    private record Phase(String name, FaultSpec stockFault, Duration length) {}

    private static final List<Phase> PHASES = List.of(
            new Phase("flood starts", FaultSpec.getDefaultInstance(), ONSET),
            new Phase("steady", FaultSpec.getDefaultInstance(), PHASE),
            new Phase("Stock +200 ms", FaultSpec.newBuilder().setDelayMs(200).build(), PHASE),
            new Phase("delay off", FaultSpec.getDefaultInstance(), PHASE),
            new Phase("Stock +1 ms CPU", FaultSpec.newBuilder().setWorkMs(1).build(), PHASE),
            new Phase("work off", FaultSpec.getDefaultInstance(), PHASE));

    @Test
    @Timeout(value = 30, unit = TimeUnit.MINUTES, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
    void fixedThenAdaptiveSeatsUnderAFloodWhileStocksCapacityChanges() throws Exception {
        List<String> rows = new ArrayList<>();
        rows.add("| seats | phase | polite caller: complete | p50 | p99 | max | Edge seats (first / low / high / last)"
                + " | Pricing seats | Stock seats | flood answered OK | polite caller: other outcomes"
                + " | rejected at Edge / Pricing / Stock (every caller, by reason)"
                + " | answered after their deadline at Edge / Pricing / Stock |");
        rows.add("|---|---|---:|---:|---:|---:|---|---|---|---:|---|---|---|");
        List<String> on = List.of("--grpcops.admission.adaptive.enabled=true");
        List<String> off = List.of("--grpcops.admission.adaptive.enabled=false");
        // adaptive.contenders: a comma-separated subset, to measure one alone
        List<String> only = List.of(System.getProperty("adaptive.contenders", "fixed,adaptive,adaptive at Edge")
                .split(","));
        if (only.contains("fixed")) {
            rows.addAll(run("fixed", off, off));
        }
        if (only.contains("fixed in arrival order")) {
            // Every queue first come, first served, and no answer at dequeue: earliest deadline first's counterpart.
            List<String> arrival =
                    List.of("--grpcops.admission.adaptive.enabled=false", "--grpcops.admission.queue-order=arrival");
            rows.addAll(run("fixed in arrival order", arrival, arrival));
        }
        if (only.contains("adaptive")) {
            rows.addAll(run("adaptive", on, on));
        }
        if (only.contains("adaptive at Edge")) {
            rows.addAll(run("adaptive at Edge", off, on));
        }
        String table = String.join(System.lineSeparator(), rows);
        System.out.println(table);
        Files.writeString(
                Path.of("target/adaptive-numbers.md"),
                String.format(
                                Locale.ROOT,
                                "%d s per phase, %d Checkouts in flight from the flood, %s%n%n",
                                PHASE.toSeconds(),
                                FLOOD,
                                FLOOD_DEADLINE == null
                                        ? "no deadline"
                                        : "each with a " + FLOOD_DEADLINE.toMillis() + " ms deadline")
                        + table
                        + System.lineSeparator(),
                StandardOpenOption.CREATE,
                StandardOpenOption.APPEND);
    }

    /** {@code downstream}: Stock's and Pricing's settings; {@code atEdge}: Edge's. */
    private static List<String> run(String contender, List<String> downstream, List<String> atEdge) throws Exception {
        String tag = contender.replace(' ', '-');
        Map<String, String> env = Map.of("GRPCOPS_ADMIN_TOKEN", Replicas.TOKEN);
        List<ServiceProcess> chain = new ArrayList<>();
        List<String> rows = new ArrayList<>();
        ScheduledExecutorService sampler = Executors.newSingleThreadScheduledExecutor();
        try {
            ServiceProcess stock =
                    ServiceProcess.start("stock-service", "stock-adaptive-" + tag, "127.0.0.1", env, args(downstream));
            chain.add(stock);
            ServiceProcess pricing = ServiceProcess.start(
                    "pricing-service",
                    "pricing-adaptive-" + tag,
                    "127.0.0.1",
                    Map.of(),
                    args(downstream, "--grpc.client.stock.address=static://" + stock.target()));
            chain.add(pricing);
            ServiceProcess edge = ServiceProcess.start(
                    "edge-service",
                    "edge-adaptive-" + tag,
                    "127.0.0.1",
                    Map.of(),
                    args(atEdge, "--grpc.client.pricing.address=static://" + pricing.target()));
            chain.add(edge);
            chain.forEach(service -> service.awaitServing(Duration.ofSeconds(90)));
            List<ManagedChannel> floodChannels = IntStream.range(0, Math.max(2, (FLOOD + 899) / 900))
                    .mapToObj(i -> edge.channel())
                    .toList();
            ManagedChannel politeChannel = edge.channel();
            for (int i = 0; i < 500; i++) {
                EdgeGrpc.newBlockingStub(politeChannel)
                        .withDeadlineAfter(10, TimeUnit.SECONDS)
                        .checkout(CheckoutRequest.newBuilder()
                                .addSkus("warm-" + i % 7)
                                .build());
            }
            try (Flood flood = new Flood(floodChannels, List.of("noisy"), "default", FLOOD, FLOOD_DEADLINE)) {
                for (Phase phase : PHASES) {
                    Replicas.setFault(stock, phase.stockFault());
                    List<int[]> seats = new CopyOnWriteArrayList<>();
                    var sampling = sampler.scheduleAtFixedRate(
                            () -> seats.add(new int[] {seats(edge), seats(pricing), seats(stock)}),
                            0,
                            1,
                            TimeUnit.SECONDS);
                    int okBefore = flood.count(io.grpc.Status.Code.OK);
                    List<Counts> before = List.of(Counts.of(edge), Counts.of(pricing), Counts.of(stock));
                    PoliteCaller.Result polite =
                            PoliteCaller.run(politeChannel, "polite", "default", 20, phase.length(), DEADLINE);
                    sampling.cancel(false);
                    int okDuring = flood.count(io.grpc.Status.Code.OK) - okBefore;
                    List<Counts> after = List.of(Counts.of(edge), Counts.of(pricing), Counts.of(stock));
                    rows.add(String.format(
                            Locale.ROOT,
                            "| %s | %s | %.1f %% | %d ms | %d ms | %d ms | %s | %s | %s | %d/s | %s | %s | %d / %d / %d |",
                            contender,
                            phase.name(),
                            100 * polite.completeShare(),
                            polite.p50Millis(),
                            polite.p99Millis(),
                            polite.maxMillis(),
                            range(seats, 0),
                            range(seats, 1),
                            range(seats, 2),
                            okDuring / Math.max(1, phase.length().toSeconds()),
                            polite.others().isEmpty() ? "none" : polite.others(),
                            after.get(0).rejectedSince(before.get(0)) + " / "
                                    + after.get(1).rejectedSince(before.get(1)) + " / "
                                    + after.get(2).rejectedSince(before.get(2)),
                            Math.round(after.get(0).late() - before.get(0).late()),
                            Math.round(after.get(1).late() - before.get(1).late()),
                            Math.round(after.get(2).late() - before.get(2).late())));
                    System.out.println(rows.get(rows.size() - 1));
                }
            }
            floodChannels.forEach(ManagedChannel::shutdownNow);
            politeChannel.shutdownNow();
        } finally {
            sampler.shutdownNow();
            ServiceProcess.stopAll(chain);
        }
        return rows;
    }

    private static int seats(ServiceProcess service) {
        try {
            return (int) Prometheus.sum(service.metrics(), "grpc_admission_limit_seats");
        } catch (RuntimeException e) {
            return -1;
        }
    }

    private static final java.util.regex.Pattern REJECTED = java.util.regex.Pattern.compile(
            "(?m)^grpc_admission_rejected_total\\{[^}]*reason=\"([^\"]+)\"[^}]*} (\\S+)$");

    /**
     * A hop's counters at one moment, from one scrape: what its admission turned away so far, by
     * reason, and the calls it answered after their deadline (work done for callers that had gone).
     */
    private record Counts(Map<String, Double> rejected, double late) {

        static Counts of(ServiceProcess service) {
            String metrics = service.metrics();
            Map<String, Double> rejected = new java.util.TreeMap<>();
            java.util.regex.Matcher sample = REJECTED.matcher(metrics);
            while (sample.find()) {
                rejected.merge(sample.group(1), Double.parseDouble(sample.group(2)), Double::sum);
            }
            return new Counts(rejected, Prometheus.sum(metrics, "grpc_budget_answered_late_total"));
        }

        /** The rejections since {@code before}, as {@code reason n} pairs; "0" for none. */
        String rejectedSince(Counts before) {
            List<String> parts = new ArrayList<>();
            rejected.forEach((reason, count) -> {
                long delta = Math.round(count - before.rejected.getOrDefault(reason, 0.0));
                if (delta > 0) {
                    parts.add(reason + " " + delta);
                }
            });
            return parts.isEmpty() ? "0" : String.join(", ", parts);
        }
    }

    private static Duration floodDeadline(long millis) {
        return millis > 0 ? Duration.ofMillis(millis) : null;
    }

    private static String[] args(List<String> settings, String... more) {
        List<String> all = new ArrayList<>(settings);
        all.addAll(List.of(more));
        return all.toArray(String[]::new);
    }

    private static String range(List<int[]> samples, int hop) {
        if (samples.isEmpty()) {
            return "-";
        }
        IntSummaryStatistics stats =
                samples.stream().mapToInt(sample -> sample[hop]).summaryStatistics();
        return samples.get(0)[hop] + " / " + stats.getMin() + " / " + stats.getMax() + " / "
                + samples.get(samples.size() - 1)[hop];
    }

    static {
        try {
            Files.createDirectories(Path.of("target"));
        } catch (IOException e) {
            throw new IllegalStateException(e);
        }
    }
}
