package dev.grpcops.containers;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.grpcops.proto.chain.v1.CheckoutRequest;
import dev.grpcops.proto.chain.v1.EdgeGrpc;
import io.grpc.ManagedChannel;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * The JVM in each chain image, limited as Compose and the pods limit it (the Compose suite's
 * containers): its heap is a share of the limit (not of the host's memory), metaspace and code cache
 * are bounded, the collector is the one deploy/Dockerfile names, no collection was made for
 * metaspace's or the code cache's sake, and under Checkouts its resident memory stays within 60 % of
 * the limit. Read from what an operator reads: each service's own metrics, and the process's VmRSS.
 */
@ExtendWith(ComposeSuite.Resolver.class)
class JvmLimitsIT {

    private static final HttpClient HTTP =
            HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();
    /** The collectors' names (the {@code gc} tag of jvm_gc_pause) per flag in deploy/Dockerfile's JAVA_GC. */
    private static final Map<String, Set<String>> COLLECTORS = Map.of(
            "-XX:+UseSerialGC", Set.of("Copy", "MarkSweepCompact"),
            "-XX:+UseParallelGC", Set.of("PS Scavenge", "PS MarkSweep"),
            "-XX:+UseG1GC", Set.of("G1 Young Generation", "G1 Old Generation", "G1 Concurrent GC"),
            "-XX:+UseZGC",
                    Set.of(
                            "ZGC Cycles",
                            "ZGC Pauses",
                            "ZGC Minor Cycles",
                            "ZGC Minor Pauses",
                            "ZGC Major Cycles",
                            "ZGC Major Pauses"));

    /** The chain's services: Compose service, management port. */
    private static final Map<String, Integer> MANAGEMENT = new LinkedHashMap<>();

    static {
        MANAGEMENT.put("stock-1", 9061);
        MANAGEMENT.put("pricing-1", 9062);
        MANAGEMENT.put("edge", 9063);
    }

    /** Every service's memory limit in bytes, from docker-compose.yml (held equal to the pods' by ManifestTests). */
    private static final long MEMORY_LIMIT = composeMemoryLimit();

    /** The load the limits are read under: a fixed count, whatever the machine's speed. */
    private static final int CHECKOUTS = 400;

    private static ComposeSuite suite;

    @BeforeAll
    @Timeout(value = 12, unit = TimeUnit.MINUTES, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
    static void up(ComposeSuite compose) {
        suite = compose;
    }

    @Test
    @Timeout(value = 3, unit = TimeUnit.MINUTES, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
    void eachServicesJvmIsSizedFromItsContainersLimit() throws Exception {
        Set<String> collectors = collectorsOfTheImage();
        ManagedChannel toEdge = suite.channel("edge", 50063);
        try {
            int answered = checkouts(toEdge, CHECKOUTS);
            assertThat(answered).as("Checkouts answered under the limits").isEqualTo(CHECKOUTS);

            long limit = MEMORY_LIMIT;
            List<String> report = new ArrayList<>();
            for (var service : MANAGEMENT.entrySet()) {
                String name = service.getKey();
                String metrics = scrape(suite.address(name, service.getValue()));
                long heap = sum(metrics, "jvm_memory_max_bytes", "area=\"heap\"");
                long metaspace = sum(metrics, "jvm_memory_max_bytes", "id=\"Metaspace\"");
                // One "CodeCache", or "CodeHeap '...'" segments when the cache is large enough to be segmented
                long codeCache = sum(metrics, "jvm_memory_max_bytes", "id=\"CodeHeap")
                        + sum(metrics, "jvm_memory_max_bytes", "id=\"CodeCache\"");
                long rss = rss(name);
                Set<String> used = gcNames(metrics);
                report.add(String.format(
                        "%s: heap max %d MiB, metaspace max %d MiB, code cache max %d MiB, RSS %d MiB"
                                + " (%.0f %% of the limit), GC %s",
                        name, heap >> 20, metaspace >> 20, codeCache >> 20, rss >> 20, 100.0 * rss / limit, used));

                assertThat(heap)
                        .as("%s: heap max, half the limit", name)
                        .isBetween((long) (limit * 0.45), (long) (limit * 0.5) + (1 << 20));
                assertThat(metaspace).as("%s: metaspace max", name).isPositive().isLessThanOrEqualTo(128L << 20);
                assertThat(codeCache)
                        .as("%s: code cache max", name)
                        .isPositive()
                        .isLessThanOrEqualTo(240L << 20);
                // Collections of the whole heap for class metadata or compiled code, not for the
                // heap itself: 80-440 ms each under Serial, at start and in the first minutes of traffic.
                assertThat(sum(metrics, "jvm_gc_pause_seconds_count", "GC Threshold"))
                        .as("%s: full collections for metaspace or code cache (cause '... GC Threshold')", name)
                        .isZero();
                assertThat(used)
                        .as("%s: collectors seen in jvm_gc_pause", name)
                        .isNotEmpty()
                        .isSubsetOf(collectors);
                assertThat(rss).as("%s: resident memory under load", name).isLessThanOrEqualTo((long) (limit * 0.6));
            }
            System.out.println("JVMs under a " + (limit >> 20) + " MiB limit:\n  " + String.join("\n  ", report));
        } finally {
            toEdge.shutdownNow();
        }
    }

    /** Checkouts of three SKUs from 8 threads, {@code total} in all; how many were answered. */
    private static int checkouts(ManagedChannel channel, int total) throws Exception {
        await().atMost(Duration.ofSeconds(90))
                .pollInterval(Duration.ofMillis(200))
                .ignoreExceptions()
                .until(() -> EdgeGrpc.newBlockingStub(channel)
                        .withDeadlineAfter(5, TimeUnit.SECONDS)
                        .checkout(CheckoutRequest.newBuilder().addSkus("limits").build())
                        .getLines(0)
                        .getAvailable());
        AtomicInteger answered = new AtomicInteger();
        ExecutorService callers = Executors.newFixedThreadPool(8);
        try {
            List<Future<?>> running = new ArrayList<>();
            for (int t = 0; t < 8; t++) {
                running.add(callers.submit(() -> {
                    for (int i = 0; i < total / 8; i++) {
                        try {
                            EdgeGrpc.newBlockingStub(channel)
                                    .withDeadlineAfter(5, TimeUnit.SECONDS)
                                    .checkout(CheckoutRequest.newBuilder()
                                            .addSkus("a" + i % 50)
                                            .addSkus("b")
                                            .addSkus("c")
                                            .build());
                            answered.incrementAndGet();
                        } catch (RuntimeException e) {
                            // counted by what is answered
                        }
                    }
                }));
            }
            for (Future<?> caller : running) {
                caller.get(2, TimeUnit.MINUTES);
            }
        } finally {
            callers.shutdownNow();
        }
        return answered.get();
    }

    private static long composeMemoryLimit() {
        try {
            String compose = Files.readString(Docker.ROOT.resolve("docker-compose.yml"));
            Matcher limit = Pattern.compile("mem_limit: (\\d+)m")
                    .matcher(compose.substring(compose.indexOf("x-service:"), compose.indexOf("x-build:")));
            if (!limit.find()) {
                throw new IllegalStateException("docker-compose.yml's x-service has no mem_limit");
            }
            return Long.parseLong(limit.group(1)) * 1024 * 1024;
        } catch (IOException e) {
            throw new java.io.UncheckedIOException(e);
        }
    }

    private static Set<String> collectorsOfTheImage() throws IOException {
        Matcher flag = Pattern.compile("JAVA_GC=\"([^\"]+)\"")
                .matcher(Files.readString(Docker.ROOT.resolve("deploy/Dockerfile")));
        assertThat(flag.find()).as("deploy/Dockerfile sets JAVA_GC").isTrue();
        Set<String> names = COLLECTORS.get(flag.group(1).trim());
        assertThat(names).as("known collector for JAVA_GC=%s", flag.group(1)).isNotNull();
        return names;
    }

    private static String scrape(String address) throws Exception {
        HttpResponse<String> response = HTTP.send(
                HttpRequest.newBuilder(URI.create("http://" + address + "/actuator/prometheus"))
                        .timeout(Duration.ofSeconds(10))
                        .build(),
                HttpResponse.BodyHandlers.ofString());
        assertThat(response.statusCode()).isEqualTo(200);
        return response.body();
    }

    /** The sum of {@code metric}'s series whose labels contain {@code label}. */
    private static long sum(String metrics, String metric, String label) {
        double total = 0;
        for (String line : metrics.split("\n")) {
            if (line.startsWith(metric + "{") && line.contains(label)) {
                double value = Double.parseDouble(line.substring(line.lastIndexOf(' ') + 1));
                total += value > 0 ? value : 0; // -1: undefined
            }
        }
        return (long) total;
    }

    private static Set<String> gcNames(String metrics) {
        Set<String> names = new TreeSet<>();
        Matcher gc = Pattern.compile("^jvm_gc_pause_seconds_count\\{[^}]*gc=\"([^\"]+)\"", Pattern.MULTILINE)
                .matcher(metrics);
        while (gc.find()) {
            names.add(gc.group(1));
        }
        return names;
    }

    /** The JVM's resident memory (it is the container's PID 1). */
    private static long rss(String service) {
        String status = suite.exec(service, "cat", "/proc/1/status");
        Matcher kb = Pattern.compile("VmRSS:\\s+(\\d+) kB").matcher(status);
        assertThat(kb.find()).as("VmRSS of PID 1").isTrue();
        return Long.parseLong(kb.group(1)) * 1024;
    }
}
