package dev.grpcops.admission;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Queue;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.Semaphore;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReferenceArray;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Admission under concurrent offers, releases (at once, from other threads, twice), starts that
 * throw, cancels and queue time-outs on a real timer: every offered call ends exactly one way,
 * no seat is freed twice or lost, and the dispatch loop never recurses.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class AdmissionHammerTests {

    private static final int OFFERERS = 4;
    private static final int CALLS_PER_OFFERER = 2_500;

    /** What a call's start does with its seat. */
    private enum Mode {
        /** Releases inside start (a handler that fails on its first line). */
        RELEASE_NOW,
        /** Releases inside start, then once more. */
        RELEASE_NOW_TWICE,
        /** Hands the ticket to a releaser thread (the call ends later, elsewhere). */
        HAND_OFF,
        /** Hands the ticket to both releaser threads, which release it at the same time. */
        HAND_OFF_TWICE,
        /** Releases, then throws out of start. */
        RELEASE_THEN_THROW,
        /** Hands the ticket off, then throws out of start. */
        HAND_OFF_THEN_THROW
    }

    private static final class Boom extends RuntimeException {
        Boom() {
            super("a start that throws", null, false, false);
        }
    }

    private final ScheduledThreadPoolExecutor timerThread = new ScheduledThreadPoolExecutor(1);
    private final List<Thread> threads = new ArrayList<>();
    private final Queue<Throwable> failures = new ConcurrentLinkedQueue<>();

    AdmissionHammerTests() {
        timerThread.setRemoveOnCancelPolicy(true);
    }

    @AfterEach
    void stop() throws InterruptedException {
        for (Thread thread : threads) {
            thread.interrupt();
        }
        for (Thread thread : threads) {
            thread.join(5_000);
        }
        timerThread.shutdownNow();
    }

    /** A timer on a real thread, as admission's own is: never runs the task on the calling thread. */
    private Admission.Timer timer() {
        return (task, delayNanos) -> {
            ScheduledFuture<?> future = timerThread.schedule(task, delayNanos, TimeUnit.NANOSECONDS);
            return () -> future.cancel(false);
        };
    }

    private Thread thread(String name, Runnable body) {
        Thread thread = new Thread(
                () -> {
                    try {
                        body.run();
                    } catch (Throwable e) {
                        failures.add(e);
                    }
                },
                name);
        thread.setDaemon(true);
        threads.add(thread);
        return thread;
    }

    /** Counts what admission told its listener. */
    private static final class CountingListener implements AdmissionListener {
        final AtomicInteger dispatched = new AtomicInteger();
        final Map<RejectReason, AtomicInteger> rejected = new ConcurrentHashMap<>();

        @Override
        public void dispatched(String level, long waitNanos) {
            dispatched.incrementAndGet();
        }

        @Override
        public void rejected(String level, RejectReason reason) {
            rejected.computeIfAbsent(reason, r -> new AtomicInteger()).incrementAndGet();
        }

        int rejectedTotal() {
            return rejected.values().stream().mapToInt(AtomicInteger::get).sum();
        }
    }

    /** The shared accounting of a hammer run. */
    private final class Run {
        final int limit;
        /** Calls between their start and the first release of their seat, as the calls count them. */
        final AtomicInteger holding = new AtomicInteger();

        final AtomicInteger maxHolding = new AtomicInteger();
        final BlockingQueue<HammerCall> releaser1 = new LinkedBlockingQueue<>();
        final BlockingQueue<HammerCall> releaser2 = new LinkedBlockingQueue<>();
        /** Calls offered and not ended yet: a bound, so that the queues are not simply always full. */
        final Semaphore outstanding = new Semaphore(12);

        Run(int limit) {
            this.limit = limit;
        }
    }

    /** A call that counts how it ended and does with its seat what its mode says. */
    private final class HammerCall implements AdmissionRequest {
        final Run run;
        final String flow;
        final Mode mode;
        final AtomicInteger starts = new AtomicInteger();
        final AtomicInteger rejects = new AtomicInteger();
        final AtomicInteger cancelledByUs = new AtomicInteger();
        final AtomicBoolean released = new AtomicBoolean();
        volatile boolean holdingDecremented;
        volatile Ticket offered;
        volatile Ticket started;

        HammerCall(Run run, String flow, Mode mode) {
            this.run = run;
            this.flow = flow;
            this.mode = mode;
        }

        @Override
        public String flowId() {
            return flow;
        }

        @Override
        public void start(Ticket ticket) {
            started = ticket;
            if (starts.incrementAndGet() != 1) {
                failures.add(new AssertionError("started twice: " + this));
            }
            int now = run.holding.incrementAndGet();
            run.maxHolding.accumulateAndGet(now, Math::max);
            switch (mode) {
                case RELEASE_NOW -> releaseOnce();
                case RELEASE_NOW_TWICE -> {
                    releaseOnce();
                    ticket.release();
                }
                case HAND_OFF -> run.releaser1.add(this);
                case HAND_OFF_TWICE -> {
                    run.releaser1.add(this);
                    run.releaser2.add(this);
                }
                case RELEASE_THEN_THROW -> {
                    releaseOnce();
                    throw new Boom();
                }
                case HAND_OFF_THEN_THROW -> {
                    run.releaser2.add(this);
                    throw new Boom();
                }
                default -> throw new AssertionError(mode);
            }
        }

        /**
         * Releases the seat; whoever calls it first stops counting the seat as held before anyone
         * releases it, so that a seat freed twice shows as more holders than seats.
         */
        void releaseOnce() {
            if (released.compareAndSet(false, true)) {
                run.holding.decrementAndGet();
                holdingDecremented = true;
                run.outstanding.release();
            } else {
                while (!holdingDecremented) {
                    Thread.onSpinWait();
                }
            }
            started.release();
        }

        @Override
        public void reject(Rejection rejection) {
            if (rejects.incrementAndGet() != 1) {
                failures.add(new AssertionError("rejected twice: " + this));
            }
            run.outstanding.release();
        }

        int endings() {
            return starts.get() + rejects.get() + cancelledByUs.get();
        }

        void cancel() {
            Ticket ticket = offered;
            if (ticket != null && ticket.cancel()) {
                cancelledByUs.incrementAndGet();
                run.outstanding.release();
            }
        }

        @Override
        public String toString() {
            return flow + "/" + mode + "[starts=" + starts + ", rejects=" + rejects + ", cancelled=" + cancelledByUs
                    + "]";
        }
    }

    private void releaser(BlockingQueue<HammerCall> queue) {
        try {
            while (true) {
                queue.take().releaseOnce();
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    /**
     * OFFERERS threads offer calls (random modes, flows and allowances) while a canceller cancels
     * calls recently offered, and the offerers cancel some of their own at once; releasers end the
     * handed-off calls, the timer rejects those that wait too long.
     */
    private void hammer(Admission admission, int limit, List<String> levels) throws Exception {
        CountingListener listener = listeners.get(admission);
        Run run = new Run(limit);
        int total = OFFERERS * CALLS_PER_OFFERER;
        AtomicReferenceArray<HammerCall> calls = new AtomicReferenceArray<>(total);
        AtomicReferenceArray<HammerCall> recent = new AtomicReferenceArray<>(64);
        AtomicInteger offeredSoFar = new AtomicInteger();
        CountDownLatch offerersDone = new CountDownLatch(OFFERERS);
        CyclicBarrier go = new CyclicBarrier(OFFERERS + 1);
        // Weighted: the throwing modes are rarer (admission logs each one it catches).
        Mode[] modes = {
            Mode.RELEASE_NOW,
            Mode.RELEASE_NOW,
            Mode.RELEASE_NOW,
            Mode.RELEASE_NOW,
            Mode.RELEASE_NOW,
            Mode.RELEASE_NOW_TWICE,
            Mode.RELEASE_NOW_TWICE,
            Mode.RELEASE_NOW_TWICE,
            Mode.HAND_OFF,
            Mode.HAND_OFF,
            Mode.HAND_OFF,
            Mode.HAND_OFF,
            Mode.HAND_OFF,
            Mode.HAND_OFF_TWICE,
            Mode.HAND_OFF_TWICE,
            Mode.HAND_OFF_TWICE,
            Mode.RELEASE_THEN_THROW,
            Mode.HAND_OFF_THEN_THROW
        };

        thread("releaser-1", () -> releaser(run.releaser1)).start();
        thread("releaser-2", () -> releaser(run.releaser2)).start();
        for (int t = 0; t < OFFERERS; t++) {
            int offerer = t;
            thread("offerer-" + t, () -> {
                        try {
                            go.await();
                            ThreadLocalRandom random = ThreadLocalRandom.current();
                            for (int i = 0; i < CALLS_PER_OFFERER; i++) {
                                // A call that never ends (neither started nor rejected) would starve this.
                                assertThat(run.outstanding.tryAcquire(10, TimeUnit.SECONDS))
                                        .as("calls end")
                                        .isTrue();
                                HammerCall call = new HammerCall(
                                        run, "flow-" + random.nextInt(6), modes[random.nextInt(modes.length)]);
                                calls.set(offerer * CALLS_PER_OFFERER + i, call);
                                Admission.Level level = admission.level(levels.get(random.nextInt(levels.size())));
                                // Mostly enough to wait a while; some too little to wait at all.
                                long allowance = random.nextInt(10) == 0
                                        ? random.nextLong(1, 500_000)
                                        : random.nextLong(1_000_000, 50_000_000);
                                try {
                                    call.offered = admission.offer(level, allowance, call);
                                } catch (Boom expected) {
                                    // start ran on this thread, at once, and threw: the caller sees it
                                }
                                recent.set(offeredSoFar.getAndIncrement() & 63, call);
                                if (random.nextInt(8) == 0) {
                                    call.cancel();
                                }
                            }
                        } catch (Exception e) {
                            throw new AssertionError(e);
                        } finally {
                            offerersDone.countDown();
                        }
                    })
                    .start();
        }
        Thread canceller = thread("canceller", () -> {
            ThreadLocalRandom random = ThreadLocalRandom.current();
            while (offerersDone.getCount() > 0) {
                HammerCall call = recent.get(random.nextInt(64));
                if (call != null) {
                    call.cancel();
                }
                Thread.yield();
            }
        });
        canceller.start();
        // Admission's own invariants, looked at under its lock while the others hammer: seats add
        // up and stay within the limit, and no waiting call fits in the seats free.
        Queue<String> broken = new ConcurrentLinkedQueue<>();
        Thread checker = thread("checker", () -> {
            while (offerersDone.getCount() > 0) {
                String violation = admission.invariantViolation();
                if (violation != null && broken.size() < 10) {
                    broken.add(violation);
                }
                // A look every fifth of a millisecond: often enough to see the hammering, without
                // holding admission's lock for most of the time.
                java.util.concurrent.locks.LockSupport.parkNanos(200_000);
            }
        });
        checker.start();
        go.await();
        assertThat(offerersDone.await(40, TimeUnit.SECONDS)).as("offerers done").isTrue();
        canceller.join(10_000);
        checker.join(10_000);
        assertThat(broken).as("admission's invariants while hammered").isEmpty();

        Awaitility.await("every call started, rejected or cancelled")
                .atMost(Duration.ofSeconds(10))
                .pollInterval(Duration.ofMillis(10))
                .untilAsserted(() -> {
                    List<String> notEnded = new ArrayList<>();
                    for (int i = 0; i < total; i++) {
                        if (calls.get(i).endings() == 0) {
                            notEnded.add(calls.get(i).toString());
                        }
                    }
                    assertThat(notEnded)
                            .as("calls neither started, rejected nor cancelled")
                            .isEmpty();
                    assertThat(run.holding).as("calls still holding their seat").hasValue(0);
                });
        assertThat(failures).as("failures on the hammering threads").isEmpty();
        assertThat(run.maxHolding.get())
                .as("calls holding a seat at once: a seat freed twice lets one too many in")
                .isBetween(1, limit);

        int started = 0;
        int rejected = 0;
        int cancelled = 0;
        List<String> wrong = new ArrayList<>();
        for (int i = 0; i < total; i++) {
            HammerCall call = calls.get(i);
            if (call.endings() != 1) {
                wrong.add(call.toString());
            }
            if (call.starts.get() == 1 && call.started != call.offered && call.offered != null) {
                wrong.add(call + " started with another ticket than offer returned");
            }
            started += call.starts.get();
            rejected += call.rejects.get();
            cancelled += call.cancelledByUs.get();
        }
        assertThat(wrong)
                .as("calls not ended exactly once (started, rejected or cancelled)")
                .isEmpty();
        // Below zero would be a seat freed twice: asserted zero below.
        Awaitility.await("every seat freed")
                .atMost(Duration.ofSeconds(5))
                .pollInterval(Duration.ofMillis(10))
                .until(() ->
                        levels.stream().allMatch(name -> admission.level(name).executingSeats() <= 0));
        for (String name : levels) {
            assertThat(admission.level(name).executingSeats())
                    .as(name + " executing seats")
                    .isZero();
            assertThat(admission.level(name).inQueue()).as(name + " in queue").isZero();
        }
        assertThat(timerThread.getQueue())
                .as("no queue time-out left scheduled")
                .isEmpty();
        assertThat(listener.dispatched.get())
                .as("dispatches the listener heard of")
                .isEqualTo(started);
        assertThat(listener.rejectedTotal())
                .as("rejections (cancels included) the listener heard of")
                .isEqualTo(rejected + cancelled);
        assertThat(listener.rejected
                        .getOrDefault(RejectReason.CANCELLED, new AtomicInteger())
                        .get())
                .isEqualTo(cancelled);
        System.out.printf(
                "admission hammer, %d seats: %d started, %d rejected %s, max holding %d%n",
                limit, started, rejected, listener.rejected, run.maxHolding.get());
        // The mix really happened: otherwise the run proves little.
        assertThat(started).as("started (rejections: %s)", listener.rejected).isGreaterThan(total / 20);
        assertThat(rejected).as("rejected").isPositive();
        assertThat(cancelled).as("cancelled while queued").isPositive();

        // And admission still works: the seats are all there.
        List<HammerCall> after = new ArrayList<>();
        for (int i = 0; i < limit; i++) {
            HammerCall holder = new HammerCall(run, "after", Mode.HAND_OFF);
            holder.offered = admission.offer(admission.level(levels.get(i % levels.size())), 1_000_000_000L, holder);
            after.add(holder);
        }
        // One to each level in turn, within its nominal seats: each finds a seat free.
        assertThat(after).allSatisfy(call -> assertThat(call.starts).hasValue(1));
    }

    private final Map<Admission, CountingListener> listeners = new ConcurrentHashMap<>();

    private Admission admission(int limit, Duration maxWait, PriorityLevelConfig... levels) {
        CountingListener listener = new CountingListener();
        Admission admission = Admission.builder(AdmissionConfig.builder()
                        .limit(limit)
                        .levels(List.of(levels))
                        .maxWait(maxWait)
                        .retryPushback(Duration.ofMillis(100), Duration.ofSeconds(1))
                        .build())
                .listener(listener)
                .timer(timer())
                .build();
        listeners.put(admission, listener);
        return admission;
    }

    @Test
    void oneSeatOneQueuedLevel() throws Exception {
        Admission admission = admission(
                1,
                Duration.ofMillis(5),
                PriorityLevelConfig.builder("default")
                        .queues(8)
                        .handSize(2)
                        .queueLengthLimit(4)
                        .build());
        hammer(admission, 1, List.of("default"));
    }

    @Test
    void twoSeatsAQueuedLevelAndOneWithoutQueues() throws Exception {
        Admission admission = admission(
                2,
                Duration.ofMillis(5),
                PriorityLevelConfig.builder("queued")
                        .queues(8)
                        .handSize(2)
                        .queueLengthLimit(4)
                        .build(),
                PriorityLevelConfig.builder("at-once").queues(0).build());
        hammer(admission, 2, List.of("queued", "at-once"));
    }

    @Test
    void twoSeatsTwoQueuedLevels() throws Exception {
        Admission admission = admission(
                2,
                Duration.ofMillis(5),
                PriorityLevelConfig.builder("critical")
                        .shares(3)
                        .queues(8)
                        .handSize(2)
                        .queueLengthLimit(4)
                        .build(),
                PriorityLevelConfig.builder("sheddable")
                        .queues(4)
                        .handSize(1)
                        .queueLengthLimit(2)
                        .build());
        hammer(admission, 2, List.of("critical", "sheddable"));
    }

    /**
     * A long queue of calls that end inside their own start (release in start, some throw after),
     * offered by several threads while the seat is handed from one to the next: all start, on
     * the dispatching thread's loop, never one start inside another.
     */
    @Test
    void startsThatEndSynchronouslyWhileOthersAreDispatchedNeverRecurse() throws Exception {
        Admission admission = admission(
                1,
                Duration.ofSeconds(60),
                PriorityLevelConfig.builder("default").queueLengthLimit(10_000).build());
        Admission.Level level = admission.level("default");
        int perThread = 5_000;
        int total = OFFERERS * perThread;
        AtomicInteger started = new AtomicInteger();
        AtomicInteger maxDepth = new AtomicInteger();
        AtomicLong stackOverflows = new AtomicLong();
        ThreadLocal<int[]> depth = ThreadLocal.withInitial(() -> new int[1]);
        class EndsAtOnce implements AdmissionRequest {
            final String flow;
            final boolean throwsAfter;

            EndsAtOnce(String flow, boolean throwsAfter) {
                this.flow = flow;
                this.throwsAfter = throwsAfter;
            }

            @Override
            public String flowId() {
                return flow;
            }

            @Override
            public void start(Ticket ticket) {
                int[] d = depth.get();
                d[0]++;
                try {
                    maxDepth.accumulateAndGet(d[0], Math::max);
                    started.incrementAndGet();
                    ticket.release();
                } catch (StackOverflowError e) {
                    stackOverflows.incrementAndGet();
                    throw e;
                } finally {
                    d[0]--;
                }
                if (throwsAfter) {
                    throw new Boom();
                }
            }

            @Override
            public void reject(Rejection rejection) {
                failures.add(new AssertionError("rejected: " + rejection.describe()));
            }
        }
        Run run = new Run(1);
        HammerCall holder = new HammerCall(run, "holder", Mode.HAND_OFF);
        holder.offered = admission.offer(level, 600_000_000_000L, holder);
        assertThat(holder.starts).hasValue(1);
        assertThat(run.releaser1.take()).isSameAs(holder);

        CyclicBarrier go = new CyclicBarrier(OFFERERS + 1);
        CountDownLatch halfOffered = new CountDownLatch(OFFERERS);
        CountDownLatch done = new CountDownLatch(OFFERERS);
        for (int t = 0; t < OFFERERS; t++) {
            thread("offerer-" + t, () -> {
                        try {
                            go.await();
                            ThreadLocalRandom random = ThreadLocalRandom.current();
                            for (int i = 0; i < perThread; i++) {
                                if (i == perThread / 2) {
                                    halfOffered.countDown();
                                }
                                try {
                                    // Time enough for any wait: the holder's seat, held while the
                                    // queue fills (seconds on a loaded machine), is one of the
                                    // service times the predicted wait of thousands ahead is made of.
                                    Ticket unused = admission.offer(
                                            level,
                                            Long.MAX_VALUE / 4,
                                            new EndsAtOnce("flow-" + random.nextInt(50), random.nextInt(50) == 0));
                                } catch (Boom expected) {
                                    // found the seat free and started on this thread
                                }
                            }
                        } catch (Exception e) {
                            throw new AssertionError(e);
                        } finally {
                            done.countDown();
                        }
                    })
                    .start();
        }
        go.await();
        assertThat(halfOffered.await(30, TimeUnit.SECONDS)).isTrue();
        // Thousands wait; offers go on while this thread hands the seat down the queue.
        holder.releaseOnce();
        assertThat(done.await(30, TimeUnit.SECONDS)).isTrue();
        Awaitility.await("every call started")
                .atMost(Duration.ofSeconds(20))
                .pollInterval(Duration.ofMillis(10))
                .failFast(
                        "a start ran inside another start, or the stack overflowed",
                        () -> maxDepth.get() > 1 || stackOverflows.get() > 0)
                .until(() -> started.get() == total);

        assertThat(failures).isEmpty();
        assertThat(stackOverflows).hasValue(0);
        assertThat(maxDepth.get())
                .as("a start never runs inside another start on the same thread")
                .isEqualTo(1);
        assertThat(level.executingSeats()).isZero();
        assertThat(level.inQueue()).isZero();
        assertThat(listeners.get(admission).dispatched.get()).isEqualTo(total + 1);
        assertThat(listeners.get(admission).rejectedTotal()).isZero();
    }
}
