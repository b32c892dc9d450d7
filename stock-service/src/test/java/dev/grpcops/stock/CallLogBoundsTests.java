package dev.grpcops.stock;

import static org.assertj.core.api.Assertions.assertThat;

import com.google.protobuf.CodedOutputStream;
import dev.grpcops.proto.chain.v1.SkuStats;
import dev.grpcops.proto.chain.v1.StatsReply;
import io.grpc.Deadline;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.stream.DoubleStream;
import java.util.stream.IntStream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.annotation.Configuration;

@Timeout(60)
class CallLogBoundsTests {

    private final SimpleMeterRegistry registry = new SimpleMeterRegistry();

    /** A clock that never moves: a deadline N s away is recorded as exactly N. */
    private static final Deadline.Ticker STOPPED = new Deadline.Ticker() {
        @Override
        public long nanoTime() {
            return 0;
        }
    };

    @ParameterizedTest(name = "max {0}, {1} calls")
    @CsvSource({"4, 3", "4, 4", "4, 10", "5, 13", "1, 3", "1000, 2500"})
    void keepsTheNewestSamplesInArrivalOrder(int maxSamples, int calls) {
        CallLog log = log(10, maxSamples);
        for (int i = 1; i <= calls; i++) {
            log.record("a", Deadline.after(i, TimeUnit.SECONDS, STOPPED));
        }
        SkuStats stats = log.stats("a");
        assertThat(stats.getCalls()).isEqualTo(calls);
        double[] newest = IntStream.rangeClosed(Math.max(1, calls - maxSamples + 1), calls)
                .asDoubleStream()
                .toArray();
        assertThat(stats.getReceivedDeadlineSList())
                .containsExactly(DoubleStream.of(newest).boxed().toArray(Double[]::new));
    }

    @Test
    void noDeadlineIsMinusOne() {
        CallLog log = log(10, 10);
        log.record("a", null);
        assertThat(log.stats("a").getReceivedDeadlineSList()).containsExactly(-1.0);
    }

    @Test
    void aNewSkuEvictsTheLeastRecentlyCalledOne() {
        CallLog log = log(2, 10);
        log.record("a", null);
        log.record("b", null);
        log.record("a", null); // now b is the least recently called

        assertThat(log.record("c", null)).isEqualTo(1L);

        assertThat(log.all()).extracting(SkuStats::getSku).containsExactly("a", "c");
        assertThat(log.stats("b").getCalls()).isZero();
        assertThat(log.stats("a").getCalls()).isEqualTo(2);
        assertThat(registry.get("stock.stats.evicted.skus").counter().count()).isEqualTo(1);
    }

    @Test
    void readingStatsIsNotUse() {
        CallLog log = log(2, 10);
        log.record("a", null);
        log.record("b", null);
        log.stats("a");
        log.page(null, 10, CallLog.MAX_PAGE_BYTES);

        log.record("c", null);

        assertThat(log.all()).extracting(SkuStats::getSku).containsExactly("b", "c");
    }

    @Test
    void anEvictedFlakySkuCountsFromOneAgainSoItFailsAgain() {
        CallLog log = log(2, 10);
        assertThat(log.record("flaky-x", null))
                .as("first call: Stock answers UNAVAILABLE")
                .isEqualTo(1L);
        assertThat(log.record("flaky-x", null)).isEqualTo(2L);
        log.record("b", null);
        log.record("c", null); // evicts flaky-x, the least recently called

        assertThat(log.record("flaky-x", null))
                .as("first call again after eviction")
                .isEqualTo(1L);
    }

    @Test
    void pagesInNameOrderAndStopBeforeTheByteLimit() {
        CallLog log = log(100, 100);
        for (String sku : List.of("d", "b", "e", "a", "c")) {
            for (int i = 0; i < 100; i++) {
                log.record(sku, null);
            }
        }
        CallLog.Page first = log.page(null, 2, Long.MAX_VALUE);
        assertThat(first.skus()).extracting(SkuStats::getSku).containsExactly("a", "b");
        assertThat(first.more()).isTrue();
        CallLog.Page last = log.page("c", 10, Long.MAX_VALUE);
        assertThat(last.skus()).extracting(SkuStats::getSku).containsExactly("d", "e");
        assertThat(last.more()).isFalse();
        // A SKU that is gone still marks where to go on.
        assertThat(log.page("bb", 1, Long.MAX_VALUE).skus())
                .extracting(SkuStats::getSku)
                .containsExactly("c");

        // Every SKU here encodes to the same size; a limit of two and a half SKUs gives two.
        long oneSku = CodedOutputStream.computeMessageSize(1, log.stats("a"));
        CallLog.Page cut = log.page(null, 10, oneSku * 5 / 2);
        assertThat(cut.skus()).hasSize(2);
        assertThat(cut.more()).isTrue();
        // However small the limit, a page holds at least one SKU, so paging always advances.
        assertThat(log.page(null, 10, 1).skus()).hasSize(1);
    }

    @Test
    void byteAccountingMatchesTheEncodedReply() {
        CallLog log = log(10, 1000);
        String longSku = "\uD83D\uDCE6".repeat(128); // 128 code points of 4 UTF-8 bytes: the largest SKU
        for (int i = 0; i < 1000; i++) {
            log.record(longSku, Deadline.after(i, TimeUnit.SECONDS, STOPPED));
        }
        log.record("small", null);
        long exact = StatsReply.newBuilder().addAllSkus(log.all()).build().getSerializedSize();
        // A limit of exactly the encoded size takes both; one byte less takes one.
        assertThat(log.page(null, 10, exact).skus()).hasSize(2);
        assertThat(log.page(null, 10, exact - 1).skus()).hasSize(1);
        // The largest SKU with 1000 samples: about 8.5 KB, so the default page of 100 is < 1 MB.
        assertThat(log.stats(longSku).getSerializedSize()).isBetween(8_000, 8_700);
    }

    @Test
    void concurrentCallsKeepCountsAndTablesConsistent() throws Exception {
        CallLog log = log(20, 8);
        AtomicLong firstCalls = new AtomicLong();
        int threads = 4;
        int callsPerThread = 20_000;
        ExecutorService pool = Executors.newFixedThreadPool(threads);
        try {
            List<CompletableFuture<Void>> done = new ArrayList<>();
            for (int t = 0; t < threads; t++) {
                int seed = t;
                done.add(CompletableFuture.runAsync(
                        () -> {
                            for (int i = 0; i < callsPerThread; i++) {
                                // "hot" never leaves the table: it is called every other time.
                                String sku = i % 2 == 0 ? "hot" : "sku-" + ((i * 7 + seed) % 50);
                                if (log.record(sku, null) == 1) {
                                    firstCalls.incrementAndGet();
                                }
                                if (i % 1000 == 0) {
                                    log.page(null, 100, CallLog.MAX_PAGE_BYTES);
                                }
                            }
                        },
                        pool));
            }
            CompletableFuture.allOf(done.toArray(CompletableFuture[]::new)).get(50, TimeUnit.SECONDS);
        } finally {
            pool.shutdownNow();
        }

        assertThat(log.size()).isEqualTo(20);
        List<SkuStats> all = log.all();
        assertThat(all).hasSize(20);
        assertThat(all)
                .allSatisfy(
                        stats -> assertThat(stats.getReceivedDeadlineSCount()).isLessThanOrEqualTo(8));
        assertThat(log.stats("hot").getCalls()).as("no call lost").isEqualTo((long) threads * callsPerThread / 2);
        // Every SKU entered the table with call 1; all but the 20 still there were evicted.
        assertThat(registry.get("stock.stats.evicted.skus").counter().count()).isEqualTo(firstCalls.get() - 20);
    }

    @Test
    void samplesPerSkuAreCappedSoOneSkuFitsAMessage() {
        new ApplicationContextRunner()
                .withUserConfiguration(Properties.class)
                .withPropertyValues("stock.stats.max-samples-per-sku=100001")
                .run(context -> assertThat(context)
                        .getFailure()
                        .rootCause()
                        .hasMessageContaining("stock.stats.max-samples-per-sku must be at most 100000"));
        new ApplicationContextRunner()
                .withUserConfiguration(Properties.class)
                .withPropertyValues("stock.stats.max-samples-per-sku=100000")
                .run(context -> assertThat(context).hasNotFailed());
    }

    private CallLog log(int maxSkus, int maxSamples) {
        return new CallLog(new StockProperties(maxSkus, maxSamples), registry);
    }

    @Configuration(proxyBeanMethods = false)
    @EnableConfigurationProperties(StockProperties.class)
    static class Properties {}
}
