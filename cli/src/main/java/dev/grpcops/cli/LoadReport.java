package dev.grpcops.cli;

import com.google.gson.GsonBuilder;
import java.io.PrintWriter;
import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;
import org.HdrHistogram.Histogram;

/** The result of a load run, as a text table or as one JSON object (the keys are an interface). */
record LoadReport(
        String target,
        String method,
        Integer rate,
        Integer concurrency,
        double durationSeconds,
        long sent,
        long completed,
        Map<String, Long> status,
        double throughputPerSecond,
        Histogram latencyMicros) {

    /**
     * The report of the measured phase. Throughput counts the calls that were made and ended, over
     * the measured period (its start to the end of its last call); client-side drops are not calls made.
     */
    static LoadReport of(
            String target, String method, Integer rate, Integer concurrency, LoadStats stats, long endNanos) {
        double seconds = Math.max(endNanos - stats.startNanos(), 1) / 1e9;
        long made = stats.endedCount() - stats.count(LoadStats.CLIENT_OVERLOADED);
        return new LoadReport(
                target,
                method,
                rate,
                concurrency,
                round(seconds, 3),
                stats.sentCount(),
                stats.endedCount(),
                stats.statuses(),
                round(made / seconds, 1),
                stats.latencyMicros());
    }

    void printJson(PrintWriter out) {
        Map<String, Object> json = new LinkedHashMap<>();
        json.put("target", target);
        json.put("method", method);
        json.put("mode", rate != null ? "rate" : "concurrency");
        json.put("rate", rate);
        json.put("concurrency", concurrency);
        json.put("duration_s", durationSeconds);
        json.put("sent", sent);
        json.put("completed", completed);
        json.put("status", status);
        json.put("throughput_per_s", throughputPerSecond);
        json.put("latency_ms", latencyMillis());
        out.println(new GsonBuilder().serializeNulls().create().toJson(json));
        out.flush();
    }

    void printText(PrintWriter out) {
        out.printf(Locale.ROOT, "%-12s %s%n", "target", target);
        out.printf(Locale.ROOT, "%-12s %s%n", "method", method);
        out.printf(
                Locale.ROOT, "%-12s %s%n", "mode", rate != null ? "rate " + rate + "/s" : "concurrency " + concurrency);
        out.printf(Locale.ROOT, "%-12s %.3f s%n", "duration", durationSeconds);
        out.printf(Locale.ROOT, "%-12s %d%n", "sent", sent);
        out.printf(Locale.ROOT, "%-12s %d%n", "completed", completed);
        out.printf(Locale.ROOT, "%-12s %.1f calls/s%n", "throughput", throughputPerSecond);
        out.println();
        out.printf(Locale.ROOT, "%-22s %10s%n", "status", "calls");
        status.forEach((code, count) -> out.printf(Locale.ROOT, "%-22s %10d%n", code, count));
        out.println();
        out.printf(Locale.ROOT, "%-22s %10s%n", "latency", "ms");
        Map<String, Double> latency = latencyMillis();
        if (latency.values().stream().anyMatch(v -> v == null)) {
            out.printf(Locale.ROOT, "%-22s %10s%n", "(no calls made)", "-");
        } else {
            latency.forEach((name, millis) ->
                    out.printf(Locale.ROOT, "%-22s %10.3f%n", name.equals("p999") ? "p99.9" : name, millis));
        }
        out.flush();
    }

    /** p50 … max and mean in milliseconds; null values when no call was made. */
    private Map<String, Double> latencyMillis() {
        Map<String, Double> millis = new LinkedHashMap<>();
        boolean none = latencyMicros.getTotalCount() == 0;
        millis.put("p50", none ? null : percentile(50));
        millis.put("p90", none ? null : percentile(90));
        millis.put("p99", none ? null : percentile(99));
        millis.put("p999", none ? null : percentile(99.9));
        millis.put("max", none ? null : round(latencyMicros.getMaxValue() / 1000.0, 3));
        millis.put("mean", none ? null : round(latencyMicros.getMean() / 1000.0, 3));
        return millis;
    }

    private double percentile(double p) {
        return round(latencyMicros.getValueAtPercentile(p) / 1000.0, 3);
    }

    private static double round(double value, int decimals) {
        double scale = Math.pow(10, decimals);
        return Math.round(value * scale) / scale;
    }
}
