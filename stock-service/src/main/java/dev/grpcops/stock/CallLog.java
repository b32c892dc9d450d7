package dev.grpcops.stock;

import dev.grpcops.proto.chain.v1.SkuStats;
import io.grpc.Deadline;
import java.util.ArrayDeque;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import org.springframework.stereotype.Component;

/** What Stock's Check received, per SKU, for {@code Stats}: the proof of what each hop handed on. */
@Component
class CallLog {

    private final Map<String, SkuRecord> records = new ConcurrentHashMap<>();
    private final StockProperties properties;

    CallLog(StockProperties properties) {
        this.properties = properties;
    }

    /**
     * Records a call that arrived with {@code deadline} (null: none).
     *
     * @return how many calls this SKU has had, this one included; empty when the SKU is not recorded
     */
    Optional<Long> record(String sku, Deadline deadline) {
        double remaining = deadline == null ? -1 : deadline.timeRemaining(TimeUnit.NANOSECONDS) / 1e9;
        SkuRecord record = records.get(sku);
        if (record == null) {
            if (records.size() >= properties.maxSkus()) {
                return Optional.empty();
            }
            record = records.computeIfAbsent(sku, s -> new SkuRecord());
        }
        return Optional.of(record.add(remaining, properties.maxSamplesPerSku()));
    }

    SkuStats stats(String sku) {
        SkuRecord record = records.get(sku);
        return record == null ? SkuStats.newBuilder().setSku(sku).build() : record.toStats(sku);
    }

    List<SkuStats> all() {
        return records.entrySet().stream()
                .map(e -> e.getValue().toStats(e.getKey()))
                .sorted(Comparator.comparing(SkuStats::getSku))
                .toList();
    }

    private static final class SkuRecord {

        private final ArrayDeque<Double> received = new ArrayDeque<>();
        private long calls;

        synchronized long add(double remaining, int maxSamples) {
            if (received.size() >= maxSamples) {
                received.removeFirst();
            }
            received.addLast(remaining);
            return ++calls;
        }

        synchronized SkuStats toStats(String sku) {
            return SkuStats.newBuilder().setSku(sku).setCalls(calls).addAllReceivedDeadlineS(received).build();
        }
    }
}
