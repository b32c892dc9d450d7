package dev.grpcops.admission;

import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.function.LongSupplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Admits a server's calls by priority level and fair queuing (SPEC §9, after Kubernetes API
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
        private final int nominal;
        private final QueueSet queues;
        private final Pushback pushback;
        private long estimateNanos = INITIAL_ESTIMATE_NANOS;
        private int executing;

        private Level(Admission admission, PriorityLevelConfig config, int nominal, AdmissionConfig server) {
            this.admission = admission;
            this.name = config.name();
            this.nominal = nominal;
            this.queues = config.queues() == 0 ? null
                    : new QueueSet(config.queues(), config.handSize(), config.queueLengthLimit());
            this.pushback = new Pushback(server.retryPushback().toMillis(), server.maxRetryPushback().toMillis());
        }

        public String name() {
            return name;
        }

        /** Seats the level is guaranteed when it has calls to run: ceil(limit × shares / Σ shares). */
        public int nominalSeats() {
            return nominal;
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

        private void observe(long serviceNanos) {
            // An exponentially weighted mean, weight 1/8: follows a change within a few dozen calls.
            estimateNanos += (Math.max(0, serviceNanos) - estimateNanos) / 8;
            if (estimateNanos < 1) {
                estimateNanos = 1;
            }
        }
    }

    private final Object lock = new Object();
    private final int limit;
    private final Map<String, Level> levels;
    private final Level[] levelArray;
    private final long maxWaitNanos;
    private final AdmissionListener listener;
    private final LongSupplier clock;
    private final Timer timer;
    private final boolean hasLevelsWithoutQueues;
    private final ThreadLocal<Starter> starters = ThreadLocal.withInitial(Starter::new);
    private int executing;
    private boolean draining;

    public Admission(AdmissionConfig config, AdmissionListener listener, LongSupplier clock, Timer timer) {
        this.limit = config.limit();
        this.maxWaitNanos = config.maxWait().toNanos();
        this.listener = listener;
        this.clock = clock;
        this.timer = timer;
        long totalShares = config.levels().stream().mapToLong(PriorityLevelConfig::shares).sum();
        Map<String, Level> byName = new LinkedHashMap<>();
        for (PriorityLevelConfig level : config.levels()) {
            int nominal = (int) Math.ceil((double) limit * level.shares() / totalShares);
            byName.put(level.name(), new Level(this, level, nominal, config));
        }
        this.levels = Collections.unmodifiableMap(byName);
        this.levelArray = byName.values().toArray(new Level[0]);
        this.hasLevelsWithoutQueues = config.levels().stream().anyMatch(level -> level.queues() == 0);
    }

    /** Admission on the system clock, with timeouts on one shared daemon thread. */
    public static Admission create(AdmissionConfig config, AdmissionListener listener) {
        return new Admission(config, listener, System::nanoTime, SharedTimer.INSTANCE);
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

    /** Seats of the whole server. */
    public int limit() {
        return limit;
    }

    /**
     * Offers a call: it is started at once if a seat is free, queued, or rejected at once (see the
     * class comment). {@link AdmissionRequest#start()} or {@link AdmissionRequest#reject} may run
     * before this returns, on this thread.
     */
    public void offer(AdmissionRequest request) {
        Level level = request.level;
        long now = clock.getAsLong();
        boolean seated = false;
        Rejection rejection = null;
        synchronized (lock) {
            if (request.state != AdmissionRequest.State.NEW) {
                throw new IllegalStateException("a request is offered once");
            }
            request.offeredNanos = now;
            if (executing < limit - reservedFor(level)) {
                seat(request, now);
                seated = true;
            } else {
                rejection = enqueue(request, level, now);
            }
        }
        if (seated) {
            listener.dispatched(level.name, 0);
            request.start();
        } else if (rejection != null) {
            listener.rejected(level.name, rejection.reason());
            request.reject(rejection);
        }
    }

    /**
     * From now on calls that would wait end at once, and those waiting end now, with
     * {@link RejectReason#DRAINING}: clients take them to another replica. Calls that find a free
     * seat still run (the server still serves while it drains).
     */
    public void drain() {
        List<AdmissionRequest> dropped = new ArrayList<>();
        synchronized (lock) {
            draining = true;
            for (Level level : levelArray) {
                if (level.queues != null) {
                    for (AdmissionRequest request : level.queues.removeAll()) {
                        request.state = AdmissionRequest.State.DONE;
                        cancelTimeout(request);
                        dropped.add(request);
                    }
                }
            }
        }
        if (!dropped.isEmpty()) {
            log.info("admission: draining; {} queued calls end UNAVAILABLE", dropped.size());
        }
        for (AdmissionRequest request : dropped) {
            listener.rejected(request.level.name, RejectReason.DRAINING);
            request.reject(new Rejection(request.level.name, RejectReason.DRAINING, Duration.ZERO));
        }
    }

    void release(AdmissionRequest request) {
        long now = clock.getAsLong();
        List<AdmissionRequest> started;
        synchronized (lock) {
            if (request.state != AdmissionRequest.State.EXECUTING) {
                return;
            }
            request.state = AdmissionRequest.State.DONE;
            Level level = request.level;
            long service = now - request.startedNanos;
            if (request.queue != null) {
                // Virtual time up to now ran at the seat count before this release.
                level.queues.sync(now, level.seats());
                level.queues.finished(request, service);
            }
            executing--;
            level.executing--;
            level.observe(service);
            started = dispatch(now);
        }
        if (started != null) {
            startAll(started);
        }
    }

    boolean cancel(AdmissionRequest request) {
        synchronized (lock) {
            if (request.state != AdmissionRequest.State.QUEUED) {
                return false;
            }
            Level level = request.level;
            level.queues.sync(clock.getAsLong(), level.seats());
            level.queues.remove(request);
            request.state = AdmissionRequest.State.DONE;
            cancelTimeout(request);
        }
        listener.rejected(request.level.name, RejectReason.CANCELLED);
        return true;
    }

    private void timedOut(AdmissionRequest request) {
        Rejection rejection;
        synchronized (lock) {
            if (request.state != AdmissionRequest.State.QUEUED) {
                return;
            }
            Level level = request.level;
            long now = clock.getAsLong();
            level.queues.sync(now, level.seats());
            level.queues.remove(request);
            request.state = AdmissionRequest.State.DONE;
            rejection = rejection(level, RejectReason.TIME_OUT, now);
        }
        listener.rejected(request.level.name, RejectReason.TIME_OUT);
        request.reject(rejection);
    }

    /** Under the lock: queues the request and returns null, or returns why it cannot wait. */
    private Rejection enqueue(AdmissionRequest request, Level level, long now) {
        if (draining) {
            request.state = AdmissionRequest.State.DONE;
            return new Rejection(level.name, RejectReason.DRAINING, Duration.ZERO);
        }
        if (level.queues == null) {
            return reject(request, level, RejectReason.CONCURRENCY_LIMIT, now);
        }
        level.queues.sync(now, level.seats());
        String flow = request.flowId();
        QueueSet.FairQueue queue = level.queues.choose(flow);
        if (level.queues.full(queue)) {
            return reject(request, level, RejectReason.QUEUE_FULL, now);
        }
        long predictedWait = level.queues.dispatchesAhead(queue) * level.estimateNanos / level.seats();
        // It must be able to wait and then do its own work (the level's measured service time).
        if (predictedWait + level.estimateNanos > request.allowanceNanos) {
            return reject(request, level, RejectReason.DEADLINE_INFEASIBLE, now);
        }
        level.queues.add(request, queue, flow);
        request.state = AdmissionRequest.State.QUEUED;
        long wait = Math.max(0, Math.min(request.allowanceNanos, maxWaitNanos));
        request.cancelTimeout = timer.schedule(() -> timedOut(request), wait);
        return null;
    }

    private Rejection reject(AdmissionRequest request, Level level, RejectReason reason, long now) {
        request.state = AdmissionRequest.State.DONE;
        return rejection(level, reason, now);
    }

    private static Rejection rejection(Level level, RejectReason reason, long now) {
        return new Rejection(level.name, reason, Duration.ofMillis(level.pushback.rejected(now)));
    }

    /**
     * Under the lock: seats {@code level} may not take because levels without queues are owed them.
     * A level that queues gets its owed seats when they free; one that does not queue can only
     * find them free, so they are kept free for it. A level is never kept from its own share.
     */
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

    private void seat(AdmissionRequest request, long now) {
        request.state = AdmissionRequest.State.EXECUTING;
        request.startedNanos = now;
        executing++;
        request.level.executing++;
    }

    /** Under the lock: gives free seats to waiting calls; levels below their nominal seats first. */
    private List<AdmissionRequest> dispatch(long now) {
        List<AdmissionRequest> started = null;
        while (executing < limit) {
            Level next = null;
            boolean nextOwed = false;
            for (Level level : levelArray) {
                if (level.queues == null || level.queues.waiting() == 0) {
                    continue;
                }
                boolean owed = level.executing < level.nominal;
                if (!owed && executing >= limit - reservedFor(level)) {
                    continue; // would borrow a seat a level that does not queue is owed
                }
                // Owed seats first; among equals, the level using the least of its share.
                if (next == null || owed && !nextOwed
                        || owed == nextOwed && (long) level.executing * next.nominal < (long) next.executing * level.nominal) {
                    next = level;
                    nextOwed = owed;
                }
            }
            if (next == null) {
                break;
            }
            next.queues.sync(now, next.seats());
            AdmissionRequest request = next.queues.poll(next.estimateNanos);
            seat(request, now);
            cancelTimeout(request);
            if (started == null) {
                started = new ArrayList<>(2);
            }
            started.add(request);
        }
        return started;
    }

    private static void cancelTimeout(AdmissionRequest request) {
        Runnable cancel = request.cancelTimeout;
        request.cancelTimeout = null;
        if (cancel != null) {
            cancel.run();
        }
    }

    /**
     * Starts dispatched calls outside the lock. A call that ends while it starts frees its seat
     * to the next one: that one is started by the loop here, not by recursion, so a long queue of
     * quick failures cannot overflow the stack.
     */
    private void startAll(List<AdmissionRequest> requests) {
        Starter starter = starters.get();
        starter.pending.addAll(requests);
        if (starter.running) {
            return;
        }
        starter.running = true;
        try {
            AdmissionRequest request;
            while ((request = starter.pending.pollFirst()) != null) {
                listener.dispatched(request.level.name, request.startedNanos - request.offeredNanos);
                try {
                    request.start();
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

    private static final class Starter {
        final ArrayDeque<AdmissionRequest> pending = new ArrayDeque<>();
        boolean running;
    }

    /** One daemon thread for every admission's queue timeouts: it only rejects, never runs a call. */
    private static final class SharedTimer implements Timer {
        static final SharedTimer INSTANCE = new SharedTimer();
        private final ScheduledThreadPoolExecutor executor;

        private SharedTimer() {
            executor = new ScheduledThreadPoolExecutor(1, task -> {
                Thread thread = new Thread(task, "grpcops-admission-timer");
                thread.setDaemon(true);
                return thread;
            });
            executor.setRemoveOnCancelPolicy(true);
        }

        @Override
        public Runnable schedule(Runnable task, long delayNanos) {
            ScheduledFuture<?> future = executor.schedule(task, delayNanos, TimeUnit.NANOSECONDS);
            return () -> future.cancel(false);
        }
    }
}
