package dev.grpcops.fault.internal;

import com.google.errorprone.annotations.concurrent.GuardedBy;
import dev.grpcops.fault.FaultListener;
import dev.grpcops.fault.Faults;
import dev.grpcops.internal.ServedSeat;
import io.grpc.Context;
import io.grpc.ForwardingServerCall;
import io.grpc.Metadata;
import io.grpc.MethodDescriptor;
import io.grpc.ServerCall;
import io.grpc.ServerCallHandler;
import io.grpc.ServerInterceptor;
import io.grpc.Status;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.function.DoubleSupplier;
import java.util.function.LongSupplier;
import java.util.function.Supplier;

/**
 * Injects the current {@link Faults} into every call but the exempt ones: fails a share of them at
 * once with the faults' error code, computes for the faults' work on the call's thread before the
 * handler runs (the one fault that costs the replica CPU, and is part of the call's service time),
 * and holds the answers of the others (headers, messages, close, in order) until the delay since
 * arrival has passed and no stall is under way. Apart from the work (on the thread the call starts
 * on: the transport's own with a direct executor), the handler runs at once and no thread waits.
 */
public final class FaultInjectionInterceptor implements ServerInterceptor {

    private final Supplier<Faults> faults;
    private final FaultListener listener;
    private final Set<String> exemptServices;
    private final Set<String> exemptMethods;
    private final LongSupplier nanoClock;
    private final DoubleSupplier random;
    private final ScheduledExecutorService scheduler;

    public FaultInjectionInterceptor(
            Supplier<Faults> faults,
            FaultListener listener,
            Set<String> exemptServices,
            Set<String> exemptMethods,
            LongSupplier nanoClock,
            DoubleSupplier random,
            ScheduledExecutorService scheduler) {
        this.faults = faults;
        this.listener = listener;
        this.exemptServices = Set.copyOf(exemptServices);
        this.exemptMethods = Set.copyOf(exemptMethods);
        this.nanoClock = nanoClock;
        this.random = random;
        this.scheduler = scheduler;
    }

    @Override
    public <ReqT, RespT> ServerCall.Listener<ReqT> interceptCall(
            ServerCall<ReqT, RespT> call, Metadata headers, ServerCallHandler<ReqT, RespT> next) {
        Faults now = faults.get();
        if (!now.any()) {
            return next.startCall(call, headers);
        }
        MethodDescriptor<ReqT, RespT> method = call.getMethodDescriptor();
        if (exemptServices.contains(method.getServiceName()) || exemptMethods.contains(method.getFullMethodName())) {
            return next.startCall(call, headers);
        }
        if (now.errorRatio() > 0 && random.getAsDouble() < now.errorRatio()) {
            listener.failed();
            call.close(
                    Status.fromCode(now.errorCode())
                            .withDescription("fault injection: error-ratio " + now.errorRatio() + " (grpcops fault)"),
                    new Metadata());
            return new ServerCall.Listener<>() {};
        }
        if (!now.work().isZero()) {
            work(now.work().toNanos());
            listener.worked();
        }
        if (now.delay().isZero() && now.stall().isZero()) {
            return next.startCall(call, headers);
        }
        return next.startCall(
                new HeldCall<>(call, now, nanoClock.getAsLong(), ServedSeat.current(Context.current())), headers);
    }

    /**
     * Computes on this thread until it has had {@code nanos} of CPU time: work, not a wait, so that
     * each call costs the replica that much of a core however busy the machine is. Where the JVM
     * cannot tell this thread's CPU time (a virtual thread reads -1), wall-clock time; and never more
     * than ten times {@code nanos} of wall-clock time, so that a starved thread ends too. The result
     * is kept, so that the JIT cannot remove the loop.
     */
    static void work(long nanos) {
        boolean cpu = THREADS.isCurrentThreadCpuTimeSupported()
                && THREADS.isThreadCpuTimeEnabled()
                && THREADS.getCurrentThreadCpuTime() >= 0;
        LongSupplier clock = cpu ? THREADS::getCurrentThreadCpuTime : System::nanoTime;
        long wallStart = System.nanoTime();
        long wallLimit = nanos > Long.MAX_VALUE / 10 ? Long.MAX_VALUE : 10 * nanos;
        long start = clock.getAsLong();
        long result = start;
        while (clock.getAsLong() - start < nanos && System.nanoTime() - wallStart < wallLimit) {
            for (int i = 0; i < 1_000; i++) {
                result = result * 6364136223846793005L + 1442695040888963407L;
            }
        }
        sink = result;
    }

    private static final ThreadMXBean THREADS = ManagementFactory.getThreadMXBean();

    /** Where {@link #work} keeps its result. */
    @SuppressWarnings("unused")
    private static volatile long sink;

    /** When an answer sent at {@code now} may leave: after the delay since arrival, and after any stall. */
    static long releaseAt(Faults faults, long arrivalNanos, long now) {
        long release = Math.max(now, arrivalNanos + faults.delay().toNanos());
        long every = faults.stallEvery().toNanos();
        long stall = faults.stall().toNanos();
        if (stall > 0 && every > 0) {
            long intoPeriod = Math.floorMod(release, every);
            if (intoPeriod < stall) {
                release += stall - intoPeriod;
            }
        }
        return release;
    }

    /** The call as the handler sees it: what it sends waits for its release time, in order. */
    private final class HeldCall<ReqT, RespT> extends ForwardingServerCall.SimpleForwardingServerCall<ReqT, RespT> {

        private final Faults faults;
        private final long arrivalNanos;
        /** Admission's seat, which is told while the answer is held; null without admission. */
        private final ServedSeat seat;
        /** Operations waiting for the release, in order; null once they pass straight through. */
        @GuardedBy("this")
        private List<Runnable> held = new ArrayList<>(3);

        @GuardedBy("this")
        private boolean scheduled;

        HeldCall(ServerCall<ReqT, RespT> call, Faults faults, long arrivalNanos, ServedSeat seat) {
            super(call);
            this.faults = faults;
            this.arrivalNanos = arrivalNanos;
            this.seat = seat;
        }

        @Override
        public void sendHeaders(Metadata headers) {
            send(() -> super.sendHeaders(headers));
        }

        @Override
        public void sendMessage(RespT message) {
            send(() -> super.sendMessage(message));
        }

        @Override
        public void close(Status status, Metadata trailers) {
            send(() -> super.close(status, trailers));
        }

        private synchronized void send(Runnable operation) {
            if (held == null) {
                operation.run();
                return;
            }
            held.add(operation);
            if (scheduled) {
                return;
            }
            long now = nanoClock.getAsLong();
            long release = releaseAt(faults, arrivalNanos, now);
            if (release <= now) {
                releaseAll();
                return;
            }
            scheduled = true;
            if (seat != null) {
                // Held time is no work of the server's: admission leaves it out of the server's own
                // time (fault injection sits before the limiter, as Envoy requires of its fault filter).
                seat.holdStarted();
            }
            listener.held(
                    !faults.delay().isZero() && arrivalNanos + faults.delay().toNanos() > now,
                    release > Math.max(now, arrivalNanos + faults.delay().toNanos()));
            try {
                scheduler.schedule(this::release, release - now, TimeUnit.NANOSECONDS);
            } catch (RejectedExecutionException shutDown) {
                release(); // at once, and the seat hears the hold end
            }
        }

        private synchronized void release() {
            if (seat != null) {
                seat.holdEnded();
            }
            releaseAll();
        }

        /** Replays what was held, then lets everything pass. */
        @GuardedBy("this")
        private void releaseAll() {
            List<Runnable> toRun = held;
            held = null;
            for (Runnable operation : toRun) {
                try {
                    operation.run();
                } catch (IllegalStateException closedMeanwhile) {
                    // The call was cancelled while its answer was held: nothing more to send.
                }
            }
        }
    }
}
