package dev.grpcops.systemtest;

import java.util.Arrays;

/** Reads samples out of Prometheus text exposition, as a scraper would. */
final class Prometheus {

    private Prometheus() {}

    /**
     * The sum of every sample of {@code name} carrying all {@code labels} ({@code key="value"}
     * pairs); 0 when there is none.
     */
    static double sum(String text, String name, String... labels) {
        return text.lines()
                .filter(line -> line.startsWith(name + "{") || line.startsWith(name + " "))
                .filter(line -> Arrays.stream(labels).allMatch(line::contains))
                .mapToDouble(line -> Double.parseDouble(line.substring(line.lastIndexOf(' ') + 1)))
                .sum();
    }

    /** Whether a sample of {@code name} exists at all. */
    static boolean has(String text, String name) {
        return text.lines().anyMatch(line -> line.startsWith(name + "{") || line.startsWith(name + " "));
    }
}
