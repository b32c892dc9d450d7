package dev.grpcops.systemtest;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.regex.Pattern;

/**
 * The CPU a virtual machine's hypervisor took from it (steal: time its threads were ready to run
 * and did not get a core), from the machine-wide line of {@code /proc/stat}. Zero where there is no
 * such file.
 */
final class Steal {

    /**
     * A timing measurement during which the hypervisor took more than this share of the machine's
     * CPU is made again (within each test's bounds): on a shared 2-core machine steal comes in bursts
     * that freeze every process at once for up to a second or more, whatever the code under test does.
     */
    static final double DISTURBING_PERCENT = 2;

    private static final Path STAT = Path.of("/proc/stat");
    private static final Pattern WHITESPACE = Pattern.compile("\\s+");

    private Steal() {}

    /** {steal, all} jiffies of every CPU so far. */
    static long[] read() {
        try {
            for (String line : Files.readAllLines(STAT)) {
                if (line.startsWith("cpu ")) {
                    String[] fields = WHITESPACE.split(line.trim());
                    long all = 0;
                    // user nice system idle iowait irq softirq steal (guest time is counted in user)
                    for (int i = 1; i <= 8 && i < fields.length; i++) {
                        all += Long.parseLong(fields[i]);
                    }
                    return new long[] {fields.length > 8 ? Long.parseLong(fields[8]) : 0, all};
                }
            }
        } catch (IOException | RuntimeException e) {
            // not Linux, or a format this does not know: nothing taken that it can see
        }
        return new long[] {0, 0};
    }

    /** The share of the machine's CPU, in %, the hypervisor took between two {@link #read}s. */
    static double percent(long[] before, long[] after) {
        long all = after[1] - before[1];
        return all <= 0 ? 0 : 100.0 * (after[0] - before[0]) / all;
    }
}
