package dev.grpcops.simulation;

import dev.grpcops.admission.Admission;
import dev.grpcops.admission.AdmissionConfig;
import dev.grpcops.admission.AdmissionProbe;
import dev.grpcops.admission.AdmissionRequest;
import dev.grpcops.admission.Caller;
import dev.grpcops.admission.PriorityLevelConfig;
import dev.grpcops.admission.RejectReason;
import dev.grpcops.admission.Rejection;
import dev.grpcops.admission.Ticket;
import dev.grpcops.internal.Headers;
import io.grpc.Metadata;
import io.grpc.Status;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;

/**
 * One replica of the simulated backend: a process with its own real {@link Admission} (on the
 * world's clock), a latency, and the faults of its {@link Scenario.Replica}: slow, stalled,
 * failing, shedding, restarted, silent, drained, absent at first. It serves the streams the
 * {@link SimChannel} opens to it, and counts the cancellations it receives per second on its
 * connection, as a rapid-reset guard does.
 */
final class SimReplica {

    /** RST_STREAM frames a second on one connection beyond which the replica closes it (ENHANCE_YOUR_CALM). */
    static final int RAPID_RESET_GUARD = 400;

    final int index;
    final String address;
    private final Scenario.Replica spec;
    private final Simulation world;

    private Admission admission;
    /** The process runs (not restarted away, not absent). */
    boolean up = true;
    /** Health says SERVING. */
    boolean serving = true;
    /** Its node drops every packet: nothing arrives, nothing leaves. */
    boolean silent;
    /** Draining: new streams are refused (GOAWAY sent); those open finish. */
    boolean goingAway;

    /**
     * A process that has just started answers slowly for a while (a JIT-cold JVM): until this
     * time, every answer {@link #COLD_EXTRA_MILLIS} later.
     */
    private long coldUntil = Long.MIN_VALUE;

    /** How long a started process stays cold, and how much slower it answers meanwhile. */
    static final long COLD_NANOS = TimeUnit.SECONDS.toNanos(1);

    static final double COLD_EXTRA_MILLIS = 150;

    private boolean slow;
    private boolean stalling;
    private boolean failing;

    /** Streams open on its connection, as the replica knows them. */
    final List<SimChannel.Stream> open = new ArrayList<>();

    private long rstWindowStart;
    private int rstsInWindow;
    /** Streams it received (its share of the picks). */
    long received;

    SimReplica(int index, Scenario.Replica spec, Simulation world) {
        this.index = index;
        this.address = "sim-replica-" + index;
        this.spec = spec;
        this.world = world;
        this.admission = newAdmission();
        for (Scenario.Fault fault : spec.faults()) {
            schedule(fault);
        }
    }

    private Admission newAdmission() {
        return Admission.builder(AdmissionConfig.builder()
                        .limit(spec.seats())
                        .levels(PriorityLevelConfig.builder("default")
                                .shares(1)
                                .queues(16)
                                .handSize(4)
                                .queueLengthLimit(20)
                                .build())
                        .maxWait(Duration.ofMillis(500))
                        .build())
                .nanoClock(world.clock.nanoClock())
                .timer(world.clock.timer())
                .build();
    }

    Admission admission() {
        return admission;
    }

    /** Whether a channel could be connected to it now, and hear from it. */
    boolean reachable() {
        return up && !silent && !goingAway;
    }

    /** Whether it answers the calls it gets: the replicas a balancer must never starve. */
    boolean healthy() {
        return reachable() && serving && !slow && !stalling && !failing && spec.seats() > 8 && !cold();
    }

    private boolean cold() {
        return coldUntil != Long.MIN_VALUE && world.clock.nanoTime() - coldUntil < 0;
    }

    String violation() {
        return up ? AdmissionProbe.invariantViolation(admission) : null;
    }

    boolean idle() {
        return !up || admission.levels().stream().allMatch(l -> l.executingSeats() == 0 && l.inQueue() == 0);
    }

    private void schedule(Scenario.Fault fault) {
        long at = fault.atMillis();
        long until = at + fault.forMillis();
        switch (fault.kind()) {
            case SLOW -> {
                world.at(at, () -> slow = true);
                world.at(until, () -> slow = false);
            }
            case STALL -> {
                world.at(at, () -> stalling = true);
                world.at(until, () -> stalling = false);
            }
            case FAILING -> {
                world.at(at, () -> failing = true);
                world.at(until, () -> failing = false);
            }
            case SHEDDING -> {} // its few seats do it
            case RESTART -> {
                world.at(at, this::stop);
                world.at(until, this::startAgain);
            }
            case SILENT -> {
                world.at(at, () -> {
                    silent = true;
                    world.network.silenced(this);
                });
                world.at(until, () -> {
                    silent = false;
                    world.network.healed(this);
                });
            }
            case DRAIN -> {
                world.at(at, () -> {
                    serving = false;
                    world.network.healthChanged(this);
                });
                world.at(at + 500, () -> {
                    if (up) {
                        admission.drain();
                        goingAway = true;
                        world.network.goingAway(this);
                    }
                });
                world.at(at + 3_000, this::stop);
                world.at(at + 3_000 + fault.forMillis(), this::startAgain);
            }
            case ABSENT_AT_START -> {
                up = false;
                world.at(at, this::startAgain);
            }
        }
    }

    /** The process ends: every connection closes (the channel hears at once), its state is gone. */
    private void stop() {
        if (!up) {
            return;
        }
        up = false;
        for (SimChannel.Stream stream : List.copyOf(open)) {
            stream.serverGone();
        }
        open.clear();
        world.network.connectionsClosed(this);
    }

    /** A new process: fresh admission, serving, listening. */
    private void startAgain() {
        admission = newAdmission();
        coldUntil = world.clock.nanoTime() + COLD_NANOS;
        up = true;
        serving = true;
        goingAway = false;
        world.network.listening(this);
    }

    /** A stream arrives (its headers and message, at once). */
    void accept(SimChannel.Stream stream) {
        received++;
        if (silent) {
            return; // lost on the way: the caller waits for its deadline
        }
        if (!up || goingAway) {
            stream.answer(Status.UNAVAILABLE.withDescription(address + " refused the stream"), new Metadata());
            return;
        }
        open.add(stream);
        String caller = stream.headers.get(Caller.CALLER_KEY);
        long allowance = stream.deadlineAt == Long.MAX_VALUE
                ? TimeUnit.SECONDS.toNanos(2)
                : stream.deadlineAt - world.clock.nanoTime();
        Admission current = admission;
        stream.server = new Served(stream, caller == null ? "unnamed" : caller);
        stream.serverTicket = current.offer(current.level("default"), allowance, 1, stream.server);
    }

    /** A cancellation arrives for {@code stream} (RST_STREAM): counted for the guard, the work stopped. */
    void reset(SimChannel.Stream stream) {
        if (silent) {
            return; // lost on the way: the replica works on
        }
        long now = world.clock.nanoTime();
        if (now - rstWindowStart >= TimeUnit.SECONDS.toNanos(1)) {
            rstWindowStart = now;
            rstsInWindow = 0;
        }
        if (++rstsInWindow > RAPID_RESET_GUARD) {
            world.violation("a caller's cancellations made " + address + " close its connection (" + rstsInWindow
                    + " RST_STREAM in a second, guard " + RAPID_RESET_GUARD + ")");
            rstsInWindow = 0;
        }
        if (stream.server != null) {
            stream.server.clientGone();
        }
    }

    /** The server's side of one stream: admission's request, then its work. */
    final class Served implements AdmissionRequest {

        private final SimChannel.Stream stream;
        private final String flow;
        private Ticket ticket;
        private ScheduledFuture<?> work;
        private boolean done;

        Served(SimChannel.Stream stream, String flow) {
            this.stream = stream;
            this.flow = flow;
        }

        @Override
        public String flowId() {
            return flow;
        }

        @Override
        public void start(Ticket ticket) {
            this.ticket = ticket;
            if (done) { // the client left while admission was deciding: nothing to do
                ticket.releaseWithoutSample();
                return;
            }
            world.clock.scheduler().execute(() -> {
                if (done) {
                    return;
                }
                long serviceNanos = serviceNanos();
                work = world.clock.scheduler().schedule(this::finish, serviceNanos, TimeUnit.NANOSECONDS);
            });
        }

        private long serviceNanos() {
            double millis = 0.2 + world.exponential(spec.meanLatencyMillis());
            if (slow) {
                millis += 200;
            }
            if (cold()) {
                millis += COLD_EXTRA_MILLIS;
            }
            long nanos = (long) (millis * 1e6);
            if (stalling) {
                // No answer for the first 200 ms of every second.
                long inSecond = world.clock.nanoTime() % TimeUnit.SECONDS.toNanos(1);
                long stallLeft = TimeUnit.MILLISECONDS.toNanos(200) - inSecond;
                nanos += Math.max(0, stallLeft);
            }
            return nanos;
        }

        private void finish() {
            if (done) {
                return;
            }
            done = true;
            open.remove(stream);
            Status status =
                    failing && world.chance(0.5) ? Status.UNAVAILABLE.withDescription(address + " failed") : Status.OK;
            if (status.isOk()) {
                ticket.release();
            } else {
                ticket.releaseWithoutSample();
            }
            if (!silent) {
                stream.answer(status, new Metadata());
            }
        }

        @Override
        public void reject(Rejection rejection) {
            if (done) {
                return;
            }
            done = true;
            open.remove(stream);
            Metadata trailers = new Metadata();
            Status status;
            if (rejection.reason() == RejectReason.DRAINING) {
                status = Status.UNAVAILABLE.withDescription(rejection.describe());
            } else if (rejection.reason() == RejectReason.CANNOT_FINISH) {
                status = Status.DEADLINE_EXCEEDED.withDescription(rejection.describe());
            } else {
                status = Status.RESOURCE_EXHAUSTED.withDescription(rejection.describe());
                trailers.put(
                        Headers.RETRY_PUSHBACK,
                        Long.toString(rejection.retryAfter().toMillis()));
            }
            if (!silent) {
                stream.answer(status, trailers);
            }
        }

        /** The client cancelled, or its deadline passed: queued, it leaves; running, it stops. */
        void clientGone() {
            if (done) {
                return;
            }
            done = true;
            open.remove(stream);
            if (ticket == null) {
                if (stream.serverTicket != null) {
                    stream.serverTicket.cancel(); // still queued: it leaves its queue
                }
                return;
            }
            if (work != null) {
                work.cancel(false);
            }
            ticket.releaseWithoutSample();
        }
    }
}
