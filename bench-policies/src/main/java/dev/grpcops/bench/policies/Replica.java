package dev.grpcops.bench.policies;

import dev.grpcops.proto.chain.v1.CheckReply;
import dev.grpcops.proto.chain.v1.CheckRequest;
import dev.grpcops.proto.chain.v1.StockGrpc;
import io.grpc.Server;
import io.grpc.ServerInterceptors;
import io.grpc.Status;
import io.grpc.netty.shaded.io.grpc.netty.NettyServerBuilder;
import io.grpc.stub.ServerCallStreamObserver;
import io.grpc.stub.StreamObserver;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.util.Arrays;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;

/**
 * One Stock replica on its own loopback address: answers Check after the service time (plus what
 * its {@link Fault} adds) as a task on one scheduler thread, so a held answer holds no thread.
 * Every 100 ms it publishes its load over the last second as ORCA: qps (calls answered per second,
 * failures included), eps (failures per second) and application_utilization (mean calls in flight
 * / 100, at most 1).
 */
final class Replica extends StockGrpc.StockImplBase {

    private static final long REPORT_PERIOD_MS = 100;
    /** In-flight calls that count as fully busy: far above what a good replica ever has here. */
    private static final double FULLY_BUSY_IN_FLIGHT = 100;

    final String host;
    private final long serviceMs;
    private final ScheduledThreadPoolExecutor scheduler;
    private final Orca orca = Orca.create();
    private final Load load = new Load();
    private final AtomicLong received = new AtomicLong();
    private volatile Fault fault = Fault.NONE;
    private Server server;

    private Replica(String host, long serviceMs) {
        this.host = host;
        this.serviceMs = serviceMs;
        this.scheduler = new ScheduledThreadPoolExecutor(1, runnable -> {
            Thread thread = new Thread(runnable, "replica-" + host);
            thread.setDaemon(true);
            return thread;
        });
        scheduler.setRemoveOnCancelPolicy(true);
    }

    static Replica start(String host, long serviceMs) throws IOException {
        Replica replica = new Replica(host, serviceMs);
        // Direct executor: the handler only schedules, so calls run on the transport's threads.
        replica.server = NettyServerBuilder.forAddress(new InetSocketAddress(host, 0))
                .directExecutor()
                .addService(ServerInterceptors.intercept(replica, replica.orca.interceptor()))
                .build()
                .start();
        replica.scheduler.scheduleAtFixedRate(
                replica::publishLoad, REPORT_PERIOD_MS, REPORT_PERIOD_MS, TimeUnit.MILLISECONDS);
        return replica;
    }

    String address() {
        return host + ":" + server.getPort();
    }

    void fault(Fault fault) {
        this.fault = fault;
    }

    /** Calls received since the last time this was asked. */
    long takeReceived() {
        return received.getAndSet(0);
    }

    void stop() {
        server.shutdownNow();
        scheduler.shutdownNow();
    }

    @Override
    public void check(CheckRequest request, StreamObserver<CheckReply> responses) {
        received.incrementAndGet();
        load.begin();
        Fault now = fault;
        if (now.failsNow()) {
            load.end(Load.Exit.FAILED);
            responses.onError(
                    Status.UNAVAILABLE.withDescription("injected failure").asRuntimeException());
            return;
        }
        ServerCallStreamObserver<CheckReply> call = (ServerCallStreamObserver<CheckReply>) responses;
        CheckReply reply =
                CheckReply.newBuilder().setSku(request.getSku()).setQty(1).build();
        AtomicBoolean over = new AtomicBoolean();
        AtomicReference<ScheduledFuture<?>> pending = new AtomicReference<>();
        // Deadline passed or caller gone: drop the answer now, and stop counting the call as in flight.
        // The handler can only be set while the call starts, so before the answer is scheduled.
        call.setOnCancelHandler(() -> {
            if (over.compareAndSet(false, true)) {
                load.end(Load.Exit.CANCELLED);
                ScheduledFuture<?> scheduled = pending.get();
                if (scheduled != null) {
                    scheduled.cancel(false);
                }
            }
        });
        pending.set(scheduler.schedule(
                () -> {
                    if (over.compareAndSet(false, true)) {
                        load.end(Load.Exit.ANSWERED);
                        call.onNext(reply);
                        call.onCompleted();
                    }
                },
                now.replyDelayMs(serviceMs, System.currentTimeMillis()),
                TimeUnit.MILLISECONDS));
    }

    private void publishLoad() {
        double[] lastSecond = load.step();
        orca.report(lastSecond[0], lastSecond[1], Math.min(1.0, lastSecond[2] / FULLY_BUSY_IN_FLIGHT));
    }

    /**
     * Calls in flight integrated over time (their mean is what a busy fraction would be with one
     * server thread per call), calls answered and calls failed, over the last second in 100 ms
     * steps. A second rather than a step: a replica the balancer sends a few calls a step would
     * now and then report no failures at all, and weighted_round_robin goes by the latest report.
     */
    private static final class Load {

        private static final int STEPS = (int) (1000 / REPORT_PERIOD_MS);
        private static final int ANSWERED = 0;
        private static final int FAILED = 1;
        private static final int IN_FLIGHT_NANOS = 2;
        private static final int LENGTH_NANOS = 3;

        /** The last STEPS steps, {@code current} the one under way. */
        private final double[][] steps = new double[STEPS][4];

        private int current;
        private long inFlight;
        private long lastChange = System.nanoTime();
        private long stepStart = lastChange;

        synchronized void begin() {
            advance();
            inFlight++;
        }

        /** How a call left: a cancelled one (deadline passed, caller gone) was never answered. */
        enum Exit {
            ANSWERED,
            FAILED,
            CANCELLED
        }

        synchronized void end(Exit exit) {
            advance();
            inFlight--;
            if (exit != Exit.CANCELLED) {
                steps[current][ANSWERED]++;
            }
            if (exit == Exit.FAILED) {
                steps[current][FAILED]++;
            }
        }

        /** Ends the step under way; {qps, eps, mean in flight} over the last second. */
        synchronized double[] step() {
            advance();
            steps[current][LENGTH_NANOS] = lastChange - stepStart;
            stepStart = lastChange;
            double[] sum = new double[4];
            for (double[] step : steps) {
                for (int i = 0; i < sum.length; i++) {
                    sum[i] += step[i];
                }
            }
            current = (current + 1) % STEPS;
            Arrays.fill(steps[current], 0);
            double seconds = Math.max(1e-3, sum[LENGTH_NANOS] / 1e9);
            return new double[] {sum[ANSWERED] / seconds, sum[FAILED] / seconds, sum[IN_FLIGHT_NANOS] / 1e9 / seconds};
        }

        private void advance() {
            long now = System.nanoTime();
            steps[current][IN_FLIGHT_NANOS] += (double) inFlight * (now - lastChange);
            lastChange = now;
        }
    }
}
