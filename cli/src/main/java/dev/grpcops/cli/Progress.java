package dev.grpcops.cli;

import io.grpc.Status;
import java.io.PrintWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Locale;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;

/**
 * The progress line, about once a second, on stderr: sent, ok, errors, the rate of the last
 * second, p99 so far. On a terminal it is rewritten in place; elsewhere (--progress into a pipe or
 * a file) it is one line per second.
 */
final class Progress implements AutoCloseable {

    private final PrintWriter err;
    private final boolean inPlace;
    private final ScheduledExecutorService ticker = Executors.newSingleThreadScheduledExecutor(runnable -> {
        Thread thread = new Thread(runnable, "grpcops-load-progress");
        thread.setDaemon(true);
        return thread;
    });
    private volatile String label = "";
    private volatile LoadStats stats;
    private long lastEnded;
    private long lastNanos;

    private Progress(PrintWriter err, boolean inPlace) {
        this.err = err;
        this.inPlace = inPlace;
        ticker.scheduleAtFixedRate(this::print, 1, 1, TimeUnit.SECONDS);
    }

    /** A progress line on {@code err} if stderr is a terminal or {@code forced}; else nothing. */
    static Progress to(PrintWriter err, boolean forced) {
        boolean terminal = stderrIsTerminal();
        return terminal || forced ? new Progress(err, terminal) : null;
    }

    /** Reports on {@code phaseStats} from now, labelled {@code phaseLabel} (e.g. "warm-up"). */
    synchronized void follow(String phaseLabel, LoadStats phaseStats) {
        label = phaseLabel;
        stats = phaseStats;
        lastEnded = 0;
        lastNanos = phaseStats.startNanos();
    }

    private synchronized void print() {
        LoadStats current = stats;
        if (current == null) {
            return;
        }
        long now = System.nanoTime();
        long ended = current.endedCount();
        double rate = now > lastNanos ? (ended - lastEnded) * 1e9 / (now - lastNanos) : 0;
        lastEnded = ended;
        lastNanos = now;
        long ok = current.count(Status.Code.OK.name());
        double p99 = current.latencyMicros().getValueAtPercentile(99) / 1000.0;
        String line = String.format(
                Locale.ROOT,
                "%s%6.1fs  sent %d  ok %d  errors %d  rate %.1f/s  p99 %.2f ms",
                label,
                (now - current.startNanos()) / 1e9,
                current.sentCount(),
                ok,
                ended - ok,
                rate,
                p99);
        if (inPlace) {
            err.print("\r" + line + "\033[K");
        } else {
            err.println(line);
        }
        err.flush();
    }

    /** Prints the final line of the phase followed, and stops. */
    @Override
    public void close() {
        ticker.shutdownNow();
        print();
        if (inPlace) {
            err.println();
        }
        err.flush();
    }

    /**
     * Java 17 cannot ask whether stderr alone is a terminal ({@code System.console()} looks at
     * stdin and stdout); on Linux /proc says where fd 2 goes.
     */
    private static boolean stderrIsTerminal() {
        try {
            String target = Files.readSymbolicLink(Path.of("/proc/self/fd/2")).toString();
            return target.startsWith("/dev/pts/") || target.startsWith("/dev/tty");
        } catch (Exception notLinux) {
            return System.console() != null;
        }
    }
}
