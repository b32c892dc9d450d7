package dev.grpcops.cli;

import java.util.concurrent.locks.LockSupport;

/**
 * Fixed rate, open loop: call i is due at start + i / rate, and is started then whatever the
 * earlier calls are doing. Its latency counts from that intended time, not from when it actually
 * left, so a client that fell behind (a pause, a slow machine) cannot hide a slow server
 * (coordinated omission). Sends are made from the calling thread; answers arrive on gRPC's.
 */
final class OpenLoop {

    /** What the loop sends through: {@link LoadCaller}, or a test's stand-in. */
    interface Sender {
        int outstanding();

        /** Starts one call, intended at {@code dueNanos}. */
        void send(long dueNanos, LoadStats stats);
    }

    /** The time the loop keeps: the machine's, or a test's. */
    interface Clock {
        Clock SYSTEM = new Clock() {
            @Override
            public long nanoTime() {
                return System.nanoTime();
            }

            @Override
            public void waitUntil(long dueNanos) throws InterruptedException {
                OpenLoop.waitUntil(dueNanos);
            }
        };

        long nanoTime();

        void waitUntil(long dueNanos) throws InterruptedException;
    }

    private final Sender sender;
    private final double nanosPerCall;
    private final int maxOutstanding;
    private final Clock clock;

    OpenLoop(LoadCaller caller, int rate, int maxOutstanding) {
        this(
                new Sender() {
                    @Override
                    public int outstanding() {
                        return caller.outstanding();
                    }

                    @Override
                    public void send(long dueNanos, LoadStats stats) {
                        caller.call(dueNanos, stats, null);
                    }
                },
                rate,
                maxOutstanding,
                Clock.SYSTEM);
    }

    OpenLoop(Sender sender, int rate, int maxOutstanding, Clock clock) {
        this.sender = sender;
        this.nanosPerCall = 1e9 / rate;
        this.maxOutstanding = maxOutstanding;
        this.clock = clock;
    }

    /**
     * Sends into {@code stats} from now, for {@code durationNanos} or {@code count} calls (the
     * other one 0), and returns after the last intended send. A send due while
     * {@code maxOutstanding} calls are outstanding is not made: it counts as
     * {@link LoadStats#CLIENT_OVERLOADED}, so a stalled server cannot make the client queue without bound.
     */
    void run(LoadStats stats, long durationNanos, long count) throws InterruptedException {
        long start = clock.nanoTime();
        stats.start(start);
        for (long i = 0; count == 0 || i < count; i++) {
            long offset = (long) (i * nanosPerCall);
            if (durationNanos > 0 && offset >= durationNanos) {
                return;
            }
            long due = start + offset;
            clock.waitUntil(due);
            if (sender.outstanding() >= maxOutstanding) {
                stats.dropped(clock.nanoTime());
            } else {
                sender.send(due, stats);
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
