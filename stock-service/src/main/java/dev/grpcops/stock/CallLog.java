package dev.grpcops.stock;

import com.google.protobuf.CodedOutputStream;
import dev.grpcops.proto.chain.v1.SkuStats;
import io.grpc.Deadline;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.ReentrantLock;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.stereotype.Component;

/**
 * What Stock's Check received, per SKU, for {@code Stats}: the proof of what each hop handed on.
 *
 * <p>Bounded: at most {@code stock.stats.max-skus} SKUs, each with its call count and the newest
 * {@code stock.stats.max-samples-per-sku} received deadlines in a primitive ring buffer (8 bytes a
 * sample, grown on demand: a SKU called once costs a few dozen bytes, not a full buffer). A new SKU
 * beyond the limit evicts the least recently called one, counted by
 * {@code stock_stats_evicted_skus_total}.
 *
 * <p>One lock guards everything: each operation under it is a map lookup and an array write (or,
 * for a {@code Stats} page, copying at most a page of samples), far shorter than a gRPC call.
 */
@Component
class CallLog {

    /** Stats replies stop before their SKUs would pass this many bytes (clients' default limit is 4 MiB). */
    static final int MAX_PAGE_BYTES = 2 * 1024 * 1024;

    private final ReentrantLock lock = new ReentrantLock();
    /** In access order: the first entry is the least recently called SKU. Only Check touches it. */
    private final LinkedHashMap<String, SkuRecord> byRecency = new LinkedHashMap<>(16, 0.75f, true);
    /** The same records sorted by SKU, for Stats (which must not count as use). */
    private final TreeMap<String, SkuRecord> byName = new TreeMap<>();

    private final int maxSkus;
    private final int maxSamples;
    private final Counter evicted;

    @Autowired
    CallLog(StockProperties properties, MeterRegistry registry) {
        this.maxSkus = properties.maxSkus();
        this.maxSamples = properties.maxSamplesPerSku();
        this.evicted = Counter.builder("stock.stats.evicted.skus")
                .description("SKUs dropped from Stats to make room for a new one (least recently called first)")
                .register(registry);
    }

    CallLog(StockProperties properties) {
        this(properties, new SimpleMeterRegistry());
    }

    /**
     * Records a call that arrived with {@code deadline} (null: none).
     *
     * <p>A SKU that is not in the table (never called, or evicted) starts again at call 1. For a
     * {@code flaky-} SKU that is what design §5 asks: it "fails its first call", and after an
     * eviction the next call is the first this process knows of, so it fails again. Refusing to
     * record new SKUs instead (as before) let a flaky SKU's first call succeed once the table was full.
     *
     * @return how many calls this SKU has had since it was (re)entered in the table, this one included
     */
    long record(String sku, Deadline deadline) {
        double remaining = deadline == null ? -1 : deadline.timeRemaining(TimeUnit.NANOSECONDS) / 1e9;
        lock.lock();
        try {
            SkuRecord record = byRecency.get(sku);
            if (record == null) {
                if (byRecency.size() >= maxSkus) {
                    evictLeastRecentlyUsed();
                }
                record = new SkuRecord(maxSamples);
                byRecency.put(sku, record);
                byName.put(sku, record);
            }
            return record.add(remaining, maxSamples);
        } finally {
            lock.unlock();
        }
    }

    private void evictLeastRecentlyUsed() {
        Iterator<Map.Entry<String, SkuRecord>> eldest = byRecency.entrySet().iterator();
        String sku = eldest.next().getKey();
        eldest.remove();
        byName.remove(sku);
        evicted.increment();
    }

    /** One SKU's stats; zero calls when it is not in the table. Does not count as use. */
    SkuStats stats(String sku) {
        Snapshot snapshot;
        lock.lock();
        try {
            SkuRecord record = byName.get(sku);
            if (record == null) {
                return SkuStats.newBuilder().setSku(sku).build();
            }
            snapshot = record.snapshot(sku);
        } finally {
            lock.unlock();
        }
        return snapshot.toStats();
    }

    /** Every SKU, sorted by name, unpaged: for tests and small tables only. */
    List<SkuStats> all() {
        return page(null, Integer.MAX_VALUE, Long.MAX_VALUE).skus();
    }

    /**
     * Up to {@code size} SKUs sorted by name, starting after {@code after} (null: from the first),
     * ending early before the encoded SKUs would pass {@code maxBytes} (at least one SKU is always
     * returned when one is left, however large).
     */
    Page page(String after, int size, long maxBytes) {
        List<Snapshot> snapshots = new ArrayList<>(Math.min(size, 128));
        boolean more;
        lock.lock();
        try {
            Iterator<Map.Entry<String, SkuRecord>> entries = (after == null ? byName : byName.tailMap(after, false))
                    .entrySet()
                    .iterator();
            long bytes = 0;
            while (entries.hasNext() && snapshots.size() < size) {
                Map.Entry<String, SkuRecord> entry = entries.next();
                long encoded = entry.getValue().encodedSizeInReply(entry.getKey());
                if (!snapshots.isEmpty() && bytes + encoded > maxBytes) {
                    break;
                }
                bytes += encoded;
                snapshots.add(entry.getValue().snapshot(entry.getKey()));
            }
            // Another SKU after the last one returned: worth a next page.
            more = !snapshots.isEmpty()
                    && byName.higherKey(snapshots.get(snapshots.size() - 1).sku()) != null;
        } finally {
            lock.unlock();
        }
        // Building the protobuf messages outside the lock: Check calls never wait for it.
        return new Page(snapshots.stream().map(Snapshot::toStats).toList(), more);
    }

    /** How many SKUs the table holds now. */
    int size() {
        lock.lock();
        try {
            return byRecency.size();
        } finally {
            lock.unlock();
        }
    }

    /** A page of SKUs; {@code more}: further SKUs sort after the last one. */
    record Page(List<SkuStats> skus, boolean more) {}

    private record Snapshot(String sku, long calls, double[] received) {

        SkuStats toStats() {
            SkuStats.Builder stats = SkuStats.newBuilder().setSku(sku).setCalls(calls);
            for (double value : received) {
                stats.addReceivedDeadlineS(value);
            }
            return stats.build();
        }
    }

    /** Guarded by the CallLog's lock. */
    private static final class SkuRecord {

        /** Grown by doubling up to maxSamples; once full, the oldest sample is overwritten. */
        private double[] ring;
        /** Index of the oldest sample. */
        private int start;

        private int size;
        private long calls;

        SkuRecord(int maxSamples) {
            ring = new double[Math.min(4, maxSamples)];
        }

        long add(double remaining, int maxSamples) {
            if (size < ring.length) {
                ring[(start + size) % ring.length] = remaining;
                size++;
            } else if (ring.length < maxSamples) {
                double[] grown = new double[(int) Math.min(maxSamples, 2L * ring.length)];
                copyInOrder(grown);
                ring = grown;
                start = 0;
                ring[size++] = remaining;
            } else {
                // Full: the newest replaces the oldest, which becomes the next one.
                ring[start] = remaining;
                start = (start + 1) % ring.length;
            }
            return ++calls;
        }

        private void copyInOrder(double[] target) {
            int firstPart = Math.min(size, ring.length - start);
            System.arraycopy(ring, start, target, 0, firstPart);
            System.arraycopy(ring, 0, target, firstPart, size - firstPart);
        }

        Snapshot snapshot(String sku) {
            double[] received = new double[size];
            copyInOrder(received);
            return new Snapshot(sku, calls, received);
        }

        /** Bytes this SKU adds to a StatsReply: the SkuStats message plus its tag and length. */
        long encodedSizeInReply(String sku) {
            int samples = 8 * size;
            int message = CodedOutputStream.computeStringSize(1, sku)
                    + (calls == 0 ? 0 : CodedOutputStream.computeInt64Size(2, calls))
                    + (size == 0 ? 0 : 1 + CodedOutputStream.computeUInt32SizeNoTag(samples) + samples);
            return 1 + CodedOutputStream.computeUInt32SizeNoTag(message) + message;
        }
    }
}
