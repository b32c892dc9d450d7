package dev.grpcops.admission;

import com.google.errorprone.annotations.concurrent.GuardedBy;
import dev.grpcops.internal.RateLimitedLog;
import dev.grpcops.internal.SharedScheduler;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.LongSupplier;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Admits a server's calls by priority level and fair queuing (design §9, after Kubernetes API
 * Priority and Fairness). The server has {@code limit} seats; a call takes one while it runs. A
 * call that finds a seat free runs at once; otherwise it waits in its level's fair queues, or is
 * rejected at once when it could not finish in time anyway, when its queue is full, or when its
 * level does not queue. When a seat frees, levels below their nominal seats are served first, then
 * the others borrow it (never the seats owed to a level without queues, which could not wait for
 * them). Nobody waits on a thread: a queued call is started by whichever thread freed the seat, or
 * rejected by admission's timer when its wait outlives its allowance.
 *
 * <p>Unlike APF, a call that finds a seat free skips the queues (no hashing on the fast path): fair
 * order is kept among the calls that wait, which is when it matters.
 *
 * <p>The seats, the levels' shares and queues, the limit and the queue time-outs change together
 * under one lock, in this one class: split, that lock's invariants would spread over several files. The fair queues' arithmetic is {@link QueueSet}'s, the adaptive limit's
 * {@link GradientLimit}'s.
 */
public final class Admission {

    private static final Logger log = LoggerFactory.getLogger(Admission.class);
    /** APF's first guess at a call's service time, before any was measured. */
    static final long INITIAL_ESTIMATE_NANOS = 3_000_000L;

    /**
     * Runs {@code task} after {@code delayNanos}; returns what cancels it. Called under admission's
     * lock: it must not block, nor run the task on the calling thread.
     */
    @FunctionalInterface
    public interface Timer {
        Runnable schedule(Runnable task, long delayNanos);
    }

    /** One priority level: its seats, its queues, and what it reports to metrics. */
    public static final class Level {
        private final Admission admission;
        private final String name;
        private final int shares;
        // Under the admission's lock, as the fields below: the nominal seats follow an adaptive limit.
        private int nominal;
        private final QueueSet queues;
        private final Pushback pushback;
        /** Its calls' time in their seats: what a seat's turnover takes (fair queuing, predicted waits). */
        private long estimateNanos = INITIAL_ESTIMATE_NANOS;
        /** Their own work: that time less what they waited on their downstream calls (or fault injection). */
        private long ownEstimateNanos = INITIAL_ESTIMATE_NANOS;

        private int executing;

        private Level(Admission admission, PriorityLevelConfig config, AdmissionConfig server) {
            this.admission = admission;
            this.name = config.name();
            this.shares = config.shares();
            this.queues = config.queues() == 0
                    ? null
                    : new QueueSet(config.queues(), config.handSize(), config.queueLengthLimit(), server.queueOrder());
            this.pushback = new Pushback(
                    server.retryPushback().toMillis(), server.maxRetryPushback().toMillis());
        }

        public String name() {
            return name;
        }

        /**
         * Seats the level is guaranteed when it has calls to run: ceil(limit × shares / Σ shares), of
         * the limit now when it adapts.
         */
        public int nominalSeats() {
            synchronized (admission.lock) {
                return nominal;
            }
        }

        /** Seats its calls hold now, borrowed ones included. */
        public int executingSeats() {
            synchronized (admission.lock) {
                return executing;
            }
        }

        /** Calls waiting in its queues. */
        public int inQueue() {
            synchronized (admission.lock) {
                return queues == null ? 0 : queues.waiting();
            }
        }

        Admission admission() {
            return admission;
        }

        private int seats() {
            return Math.max(Math.max(1, executing), nominal);
        }

        private void observe(long serviceNanos, long waitedNanos) {
            estimateNanos = follow(estimateNanos, serviceNanos);
            ownEstimateNanos = follow(ownEstimateNanos, serviceNanos - waitedNanos);
        }

        /** An exponentially weighted mean, weight 1/8: follows a change within a few dozen calls. */
        private static long follow(long estimate, long sample) {
            return Math.max(1, estimate + (Math.max(0, sample) - estimate) / 8);
        }

        /**
         * The time {@code request} needs once seated, beyond what its allowance set aside for its
         * downstream calls: its own work, or more when its calls wait longer downstream than that.
         */
        private long workNanos(OfferedCall request) {
            return Math.max(ownEstimateNanos, estimateNanos - request.setAsideNanos);
        }
    }

    private final Object lock = new Object();
    private final long totalShares;
    /** The widest a call may be: the limit, or the most it can adapt to. */
    private final int maxWidth;

    private final @Nullable GradientLimit adaptiveLimit;
    private final Map<String, Level> levels;
    private final Level[] levelArray;
    private final long maxWaitNanos;
    private final AdmissionListener listener;
    private final LongSupplier clock;
    private final Timer timer;
    private final boolean hasLevelsWithoutQueues;
    private final boolean earliestDeadlineFirst;
    private final RateLimitedLog listenerFailures = new RateLimitedLog(log, Duration.ofSeconds(10));
    private final ThreadLocal<Starter> starters = ThreadLocal.withInitial(Starter::new);

    @GuardedBy("lock")
    private int limit;

    @GuardedBy("lock")
    private int executing;

    @GuardedBy("lock")
    private boolean draining;

    /** How many calls have queued: each one's place, for ties in deadline order. */
    @GuardedBy("lock")
    private long queued;

    private Admission(Builder builder) {
        AdmissionConfig config = builder.config;
        AdaptiveLimit adaptive = config.adaptiveLimit();
        this.adaptiveLimit = adaptive == null ? null : new GradientLimit(adaptive, config.limit());
        this.limit = adaptiveLimit == null ? config.limit() : adaptiveLimit.limit();
        this.maxWidth = adaptive == null ? limit : adaptive.maxLimit();
        this.maxWaitNanos = config.maxWait().toNanos();
        this.listener = builder.listener;
        this.clock = builder.nanoClock;
        this.timer = builder.timer;
        this.totalShares =
                config.levels().stream().mapToLong(PriorityLevelConfig::shares).sum();
        Map<String, Level> byName = new LinkedHashMap<>();
        for (PriorityLevelConfig level : config.levels()) {
            byName.put(level.name(), new Level(this, level, config));
        }
        this.levels = Collections.unmodifiableMap(byName);
        this.levelArray = byName.values().toArray(new Level[0]);
        synchronized (lock) {
            shareOut();
        }
        this.hasLevelsWithoutQueues = config.levels().stream().anyMatch(level -> level.queues() == 0);
        this.earliestDeadlineFirst = config.queueOrder() == QueueOrder.DEADLINE;
    }

    /** Admission with {@code config}, on the system clock, its time-outs on the library's one timer thread. */
    public static Builder builder(AdmissionConfig config) {
        return new Builder(config);
    }

    /** The level called {@code name}. */
    public Level level(String name) {
        Level level = levels.get(name);
        if (level == null) {
            throw new IllegalArgumentException("no priority level '" + name + "' (defined: " + levels.keySet() + ")");
        }
        return level;
    }

    public List<Level> levels() {
        return List.of(levelArray);
    }

    /** Seats of the whole server: the configured limit, or where the adaptive limit is now. */
    public int limit() {
        synchronized (lock) {
            return limit;
        }
    }

    /** Whether the limit follows measured latency ({@link AdaptiveLimit}): then ends are samples. */
    public boolean adaptsLimit() {
        return adaptiveLimit != null;
    }

    /** The clock admission measures on: what a call waited on its downstream calls is measured on it too. */
    LongSupplier nanoClock() {
        return clock;
    }

    /** Each level's nominal seats from the limit: ceil(limit × shares / Σ shares). */
    @GuardedBy("lock")
    private void shareOut() {
        for (Level level : levelArray) {
            level.nominal = (int) Math.ceil((double) limit * level.shares / totalShares);
        }
    }

    /**
     * Offers a call to {@code level}: it is started at once if a seat is free, queued, or rejected
     * at once (see the class comment). {@link AdmissionRequest#start} or {@link AdmissionRequest#reject}
     * may run before this returns, on this thread.
     *
     * @param allowanceNanos how long the call may wait and still do its work: its budget minus what
     *     the work needs besides waiting
     * @return the call's ticket: release it once the started call has ended, cancel it if the caller leaves first
     */
    public Ticket offer(Level level, long allowanceNanos, AdmissionRequest request) {
        return offer(level, allowanceNanos, 1, request);
    }

    /**
     * As {@link #offer(Level, long, AdmissionRequest)}, for a call that takes {@code width} seats while
     * it runs (as APF gives a LIST more seats): one that fans out into that many downstream calls.
     * Its fair queue is charged for all of them, so that a caller's fan-out, and the cancellations
     * it brings, stay within its share. At least 1, at most the server's limit (with an adaptive
     * limit, a call wider than the limit takes every seat there is at the time).
     */
    public Ticket offer(Level level, long allowanceNanos, int width, AdmissionRequest request) {
        if (level.admission != this) {
            throw new IllegalArgumentException("level '" + level.name + "' belongs to another admission");
        }
        OfferedCall ticket = new OfferedCall(level, request, allowanceNanos, Math.max(1, Math.min(maxWidth, width)));
        offer(ticket);
        return ticket;
    }

    private void offer(OfferedCall request) {
        Level level = request.level;
        long now = clock.getAsLong();
        boolean seated = false;
        Rejection rejection = null;
        synchronized (lock) {
            if (request.state != OfferedCall.State.NEW) {
                throw new IllegalStateException("a request is offered once");
            }
            request.offeredNanos = now;
            request.startByNanos = saturatedAdd(now, request.allowanceNanos);
            // Free seats are never owed to a waiting call: each release gives them to every waiting
            // call that fits before it returns, so what is still free here fits none of them.
            if (executing + seatsFor(request) <= limit - reservedFor(level)) {
                seat(request, now);
                seated = true;
            } else {
                rejection = enqueue(request, level, now);
            }
        }
        if (seated) {
            dispatched(level, 0);
            request.request.start(request);
        } else if (rejection != null) {
            rejected(level, rejection.reason());
            request.request.reject(rejection);
        }
    }

    /**
     * From now on calls that would wait end at once, and those waiting end now, with
     * {@link RejectReason#DRAINING}: clients take them to another replica. Calls that find a free
     * seat still run (the server still serves while it drains).
     */
    public void drain() {
        List<OfferedCall> dropped = new ArrayList<>();
        synchronized (lock) {
            draining = true;
            for (Level level : levelArray) {
                if (level.queues != null) {
                    for (OfferedCall request : level.queues.removeAll()) {
                        request.state = OfferedCall.State.DONE;
                        cancelTimeout(request);
                        dropped.add(request);
                    }
                }
            }
        }
        if (!dropped.isEmpty()) {
            log.info("admission: draining; {} queued calls end UNAVAILABLE", dropped.size());
        }
        for (OfferedCall request : dropped) {
            rejected(request.level, RejectReason.DRAINING);
            request.request.reject(new Rejection(request.level.name, RejectReason.DRAINING, Duration.ZERO));
        }
    }

    void release(OfferedCall request, long waitedNanos, boolean sampled) {
        long now = clock.getAsLong();
        List<OfferedCall> started;
        synchronized (lock) {
            if (request.state != OfferedCall.State.EXECUTING) {
                return;
            }
            request.state = OfferedCall.State.DONE;
            Level level = request.level;
            long service = now - request.startedNanos;
            if (request.queue != null) {
                // Virtual time up to now ran at the seat count before this release.
                level.queues.sync(now, level.seats());
                level.queues.finished(request, service);
            }
            if (sampled && adaptiveLimit != null && !request.warmUp) {
                int adapted = adaptiveLimit.sample(now, service - waitedNanos, service, executing);
                if (adapted != limit) {
                    limit = adapted;
                    shareOut();
                }
            }
            executing -= request.seats;
            level.executing -= request.seats;
            if (!request.warmUp) {
                level.observe(service, waitedNanos);
            }
            started = dispatch(now);
        }
        if (started != null) {
            startAll(started);
        }
    }

    /** {@code byCaller}: its caller left (charged like a call served); else its deadline passed (not charged). */
    boolean cancel(OfferedCall request, boolean byCaller) {
        List<OfferedCall> started;
        synchronized (lock) {
            if (request.state != OfferedCall.State.QUEUED) {
                return false;
            }
            long now = clock.getAsLong();
            leaveQueue(request, now, byCaller);
            cancelTimeout(request);
            started = dispatch(now);
        }
        rejected(request.level, RejectReason.CANCELLED);
        if (started != null) {
            startAll(started);
        }
        return true;
    }

    private void timedOut(OfferedCall request) {
        Rejection rejection;
        List<OfferedCall> started;
        synchronized (lock) {
            if (request.state != OfferedCall.State.QUEUED) {
                return;
            }
            long now = clock.getAsLong();
            leaveQueue(request, now, false);
            rejection = rejection(request.level, RejectReason.TIME_OUT, now);
            started = dispatch(now);
        }
        rejected(request.level, RejectReason.TIME_OUT);
        request.request.reject(rejection);
        if (started != null) {
            startAll(started);
        }
    }

    /**
     * A queued call leaves unserved: charged to its queue as a call served when {@code charged} (its
     * caller left), and what waited behind it may fit in the seats free now.
     */
    @GuardedBy("lock")
    private void leaveQueue(OfferedCall request, long now, boolean charged) {
        Level level = request.level;
        level.queues.sync(now, level.seats());
        level.queues.remove(request, charged ? level.estimateNanos : 0);
        request.state = OfferedCall.State.DONE;
    }

    /** Queues the request and returns null, or returns why it cannot wait. */
    @GuardedBy("lock")
    private Rejection enqueue(OfferedCall request, Level level, long now) {
        if (draining) {
            request.state = OfferedCall.State.DONE;
            return new Rejection(level.name, RejectReason.DRAINING, Duration.ZERO);
        }
        if (level.queues == null) {
            return reject(request, level, RejectReason.CONCURRENCY_LIMIT, now);
        }
        level.queues.sync(now, level.seats());
        String flow = request.request.flowId();
        QueueSet.FairQueue queue = level.queues.choose(flow);
        if (level.queues.full(queue)) {
            return reject(request, level, RejectReason.QUEUE_FULL, now);
        }
        request.sequence = queued++;
        long predictedWait = level.queues.dispatchesAhead(queue, request) * level.estimateNanos / level.seats();
        // It must be able to wait and then do its work (measured; its downstream calls' share of it
        // beyond what the allowance set aside for them).
        if (predictedWait + level.workNanos(request) > request.allowanceNanos) {
            return reject(request, level, RejectReason.DEADLINE_INFEASIBLE, now);
        }
        level.queues.add(request, queue, flow);
        request.state = OfferedCall.State.QUEUED;
        long wait = Math.max(0, Math.min(request.allowanceNanos, maxWaitNanos));
        request.cancelTimeout = timer.schedule(() -> timedOut(request), wait);
        return null;
    }

    private Rejection reject(OfferedCall request, Level level, RejectReason reason, long now) {
        request.state = OfferedCall.State.DONE;
        return rejection(level, reason, now);
    }

    private static Rejection rejection(Level level, RejectReason reason, long now) {
        return new Rejection(level.name, reason, Duration.ofMillis(level.pushback.rejected(now)));
    }

    /**
     * Seats {@code level} may not take because levels without queues are owed them.
     * A level that queues gets its owed seats when they free; one that does not queue can only
     * find them free, so they are kept free for it. A level is never kept from its own share.
     */
    @GuardedBy("lock")
    private int reservedFor(Level level) {
        if (level.executing < level.nominal || !hasLevelsWithoutQueues) {
            return 0;
        }
        int reserved = 0;
        for (Level other : levelArray) {
            if (other != level && other.queues == null) {
                reserved += Math.max(0, other.nominal - other.executing);
            }
        }
        return reserved;
    }

    @GuardedBy("lock")
    private void seat(OfferedCall request, long now) {
        request.state = OfferedCall.State.EXECUTING;
        request.startedNanos = now;
        request.seats = seatsFor(request);
        executing += request.seats;
        request.level.executing += request.seats;
    }

    /**
     * Gives free seats to waiting calls until none that waits fits in the seats free (work
     * conserving): levels below their nominal seats first, then the level using the least of its
     * share; within a level, the first call in fair order that fits. A call wider than the seats
     * free waits for more without holding back a narrower call, of its level or another.
     */
    @GuardedBy("lock")
    private List<OfferedCall> dispatch(long now) {
        List<OfferedCall> started = null;
        while (executing < limit) {
            Level next = null;
            OfferedCall chosen = null;
            boolean nextOwed = false;
            for (Level level : levelArray) {
                if (level.queues == null || level.queues.waiting() == 0) {
                    continue;
                }
                boolean owed = level.executing < level.nominal;
                // Owed seats first; among equals, the level using the least of its share.
                if (next != null
                        && !(owed && !nextOwed
                                || owed == nextOwed
                                        && (long) level.executing * next.nominal
                                                < (long) next.executing * level.nominal)) {
                    continue;
                }
                // A level borrowing may not take the seats a level that does not queue is owed.
                int free = limit - executing - (owed ? 0 : reservedFor(level));
                if (free <= 0) {
                    continue;
                }
                level.queues.sync(now, level.seats());
                if (earliestDeadlineFirst) {
                    started = answerThoseTooLate(level, now, started);
                }
                OfferedCall fitting = level.queues.nextFitting(free, limit);
                if (fitting != null) {
                    next = level;
                    chosen = fitting;
                    nextOwed = owed;
                }
            }
            if (chosen == null) {
                break;
            }
            next.queues.dispatch(chosen, next.estimateNanos);
            seat(chosen, now);
            cancelTimeout(chosen);
            if (started == null) {
                started = new ArrayList<>(2);
            }
            started.add(chosen);
        }
        return started;
    }

    /**
     * The calls at the front of {@code level}'s fair order that served now would end after their
     * deadline leave their queues, to be answered at once: the seats go to calls that can still make it.
     */
    @GuardedBy("lock")
    private List<OfferedCall> answerThoseTooLate(Level level, long now, List<OfferedCall> answered) {
        OfferedCall head;
        while ((head = level.queues.peek()) != null && cannotFinish(head, level, now)) {
            level.queues.remove(head, 0);
            head.state = OfferedCall.State.DONE;
            head.rejection = new Rejection(level.name, RejectReason.CANNOT_FINISH, Duration.ZERO);
            cancelTimeout(head);
            if (answered == null) {
                answered = new ArrayList<>(2);
            }
            answered.add(head);
        }
        return answered;
    }

    /**
     * What is wrong with admission's bookkeeping now, or null: seats held never negative, and the
     * levels' adding up to the server's; never more than the limit (a fixed one); and no waiting
     * call that fits in the seats free to its level (work conserving). For tests and simulations.
     */
    String invariantViolation() {
        synchronized (lock) {
            int sum = 0;
            for (Level level : levelArray) {
                if (level.executing < 0) {
                    return "level " + level.name + " holds " + level.executing + " seats";
                }
                sum += level.executing;
            }
            if (sum != executing) {
                return "levels hold " + sum + " seats, the server counts " + executing;
            }
            if (adaptiveLimit == null && executing > limit) {
                return executing + " seats held of " + limit;
            }
            for (Level level : levelArray) {
                if (level.queues == null || level.queues.waiting() == 0) {
                    continue;
                }
                boolean owed = level.executing < level.nominal;
                int free = limit - executing - (owed ? 0 : reservedFor(level));
                if (free > 0 && level.queues.nextFitting(free, limit) != null) {
                    return "level " + level.name + " has a waiting call that fits in its " + free + " free seats";
                }
            }
            return null;
        }
    }

    /** The seats {@code request} takes: its width, at most the limit now (which an adaptive limit moves). */
    @GuardedBy("lock")
    private int seatsFor(OfferedCall request) {
        return Math.min(request.width, limit);
    }

    /** Whether what is left of {@code request}'s allowance at {@code now} is less than the work it needs. */
    private static boolean cannotFinish(OfferedCall request, Level level, long now) {
        return request.allowanceNanos - (now - request.offeredNanos) < level.workNanos(request);
    }

    private static long saturatedAdd(long a, long b) {
        long sum = a + b;
        // Overflow only when both have the same sign and the sum's differs.
        return ((a ^ sum) & (b ^ sum)) < 0 ? (b > 0 ? Long.MAX_VALUE : Long.MIN_VALUE) : sum;
    }

    private static void cancelTimeout(OfferedCall request) {
        Runnable cancel = request.cancelTimeout;
        request.cancelTimeout = null;
        if (cancel != null) {
            cancel.run();
        }
    }

    /**
     * Starts dispatched calls outside the lock, and answers those that could not finish. A call that ends while it starts frees its seat
     * to the next one: that one is started by the loop here, not by recursion, so a long queue of
     * quick failures cannot overflow the stack.
     */
    private void startAll(List<OfferedCall> requests) {
        Starter starter = starters.get();
        starter.pending.addAll(requests);
        if (starter.running) {
            return;
        }
        starter.running = true;
        try {
            OfferedCall request;
            while ((request = starter.pending.pollFirst()) != null) {
                if (request.rejection != null) {
                    rejected(request.level, request.rejection.reason());
                    request.request.reject(request.rejection);
                    continue;
                }
                dispatched(request.level, request.startedNanos - request.offeredNanos);
                try {
                    request.request.start(request);
                } catch (Throwable e) {
                    // AdmittedCall ends its own call and frees its seat; a request that throws
                    // anyway must not stop the others this loop still has to start.
                    log.warn("admission: a dispatched call failed to start", e);
                }
            }
        } finally {
            starter.running = false;
        }
    }

    /** The listener is told, but what it throws never costs a call its seat or its answer. */
    private void dispatched(Level level, long waitNanos) {
        try {
            listener.dispatched(level.name, waitNanos);
        } catch (Throwable e) {
            listenerFailed(e);
        }
    }

    private void rejected(Level level, RejectReason reason) {
        try {
            listener.rejected(level.name, reason);
        } catch (Throwable e) {
            listenerFailed(e);
        }
    }

    private void listenerFailed(Throwable e) {
        listenerFailures.warn("admission: the admission listener failed (the call goes on): " + e);
    }

    private static final class Starter {
        final ArrayDeque<OfferedCall> pending = new ArrayDeque<>();
        boolean running;
    }

    /** What admission reports to, and the clock and timer it runs on. */
    public static final class Builder {

        private final AdmissionConfig config;
        private AdmissionListener listener = AdmissionListener.NONE;
        private LongSupplier nanoClock = System::nanoTime;
        private Timer timer = Admission::scheduleShared;

        private Builder(AdmissionConfig config) {
            this.config = Objects.requireNonNull(config, "config");
        }

        /** Told of every dispatch and rejection (metrics); nothing by default. What it throws is logged, never the call's. */
        public Builder listener(AdmissionListener listener) {
            this.listener = Objects.requireNonNull(listener, "listener");
            return this;
        }

        /** A monotonic clock in nanoseconds; {@link System#nanoTime} by default (tests give a fake one). */
        public Builder nanoClock(LongSupplier nanoClock) {
            this.nanoClock = Objects.requireNonNull(nanoClock, "nanoClock");
            return this;
        }

        /**
         * Runs queue time-outs; by default the library's coarse timer thread, which runs them up to a
         * millisecond late and is not woken for each queued call (tests give a fake one).
         */
        public Builder timer(Timer timer) {
            this.timer = Objects.requireNonNull(timer, "timer");
            return this;
        }

        public Admission build() {
            return new Admission(this);
        }
    }

    // Nearly every queued call is dispatched before its time-out: the coarse timer takes a task
    // without a lock or a wake-up (a precise scheduler's lock was taken under admission's own).
    private static Runnable scheduleShared(Runnable task, long delayNanos) {
        ScheduledFuture<?> future = SharedScheduler.coarse().schedule(task, delayNanos, TimeUnit.NANOSECONDS);
        return () -> future.cancel(false);
    }
}
