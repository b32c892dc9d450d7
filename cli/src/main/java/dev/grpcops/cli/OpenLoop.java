package dev.grpcops.cli;

import java.util.concurrent.locks.LockSupport;

/**
 * Fixed rate, open loop: call i is due at start + i / rate, and is started then whatever the
 * earlier calls are doing. Its latency counts from that intended time, not from when it actually
 * left, so a client that fell behind (a pause, a slow machine) cannot hide a slow server
 * (coordinated omission). Sends are made from the calling thread; answers arrive on gRPC's.
 */
final class OpenLoop {

    private final LoadCaller caller;
    private final double nanosPerCall;
    private final int maxOutstanding;

    OpenLoop(LoadCaller caller, int rate, int maxOutstanding) {
        this.caller = caller;
        this.nanosPerCall = 1e9 / rate;
        this.maxOutstanding = maxOutstanding;
    }

    /**
     * Sends into {@code stats} from now, for {@code durationNanos} or {@code count} calls (the
     * other one 0), and returns after the last intended send. A send due while
     * {@code maxOutstanding} calls are outstanding is not made: it counts as
     * {@link LoadStats#CLIENT_OVERLOADED}, so a stalled server cannot make the client queue without bound.
     */
    void run(LoadStats stats, long durationNanos, long count) throws InterruptedException {
        long start = System.nanoTime();
        stats.start(start);
        for (long i = 0; count == 0 || i < count; i++) {
            long offset = (long) (i * nanosPerCall);
            if (durationNanos > 0 && offset >= durationNanos) {
                return;
            }
            long due = start + offset;
            waitUntil(due);
            if (caller.outstanding() >= maxOutstanding) {
                stats.dropped(System.nanoTime());
            } else {
                caller.call(due, stats, null);
            }
        }
    }

    static void waitUntil(long dueNanos) throws InterruptedException {
        for (long left = dueNanos - System.nanoTime(); left > 0; left = dueNanos - System.nanoTime()) {
            LockSupport.parkNanos(left);
            if (Thread.interrupted()) {
                throw new InterruptedException();
            }
        }
    }
}
