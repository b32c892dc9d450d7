package dev.grpcops.budget;

import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentMap;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.LongSupplier;

/**
 * Governs retries per downstream target (SPEC §11), so that a failing backend is not hit twice as
 * hard: a gRFC A6 token bucket and a ratio retry budget (after Finagle's {@code RetryBudget}),
 * both of which must allow a retry. The target is the channel's authority (what A6 throttles per
 * channel); at most {@value #MAX_TARGETS} targets are tracked, any further ones share
 * {@value #OVERFLOW}. No thread per target: the bucket is one {@link AtomicInteger} of
 * milli-tokens updated by compare-and-set, the budget a ring of ten slots behind a critical section
 * of a few array reads. The clock is injectable, for tests.
 */
public final class RetryGovernor {

    /** How many targets are tracked one by one. */
    public static final int MAX_TARGETS = 64;
    /** The target that targets beyond {@link #MAX_TARGETS} share. */
    public static final String OVERFLOW = "other";
    /** The target of attempts no budget client interceptor saw. */
    public static final String UNKNOWN = "unknown";

    private static final int SLOTS = 10;

    private final RetryThrottling throttling;
    private final LongSupplier nanoClock;
    private final BudgetListener listener;
    private final ConcurrentMap<String, Target> targets = new ConcurrentHashMap<>();
    private final boolean enforcing;

    public RetryGovernor(RetryThrottling throttling, LongSupplier nanoClock, BudgetListener listener) {
        this(throttling, nanoClock, listener, true);
    }

    private RetryGovernor(RetryThrottling throttling, LongSupplier nanoClock, BudgetListener listener,
            boolean enforcing) {
        this.throttling = throttling;
        this.nanoClock = nanoClock;
        this.listener = listener;
        this.enforcing = enforcing;
    }

    /**
     * A governor that keeps the books (tokens, gauge) but allows every retry: only the deadline
     * floor and pushback then decide, as before SPEC §11. For measuring what the governor saves.
     */
    public static RetryGovernor notEnforcing(RetryThrottling throttling, LongSupplier nanoClock, BudgetListener listener) {
        return new RetryGovernor(throttling, nanoClock, listener, false);
    }

    /** The state of {@code name} (null: {@link #UNKNOWN}), made on first use. */
    public Target target(String name) {
        String key = name == null ? UNKNOWN : name;
        Target known = targets.get(key);
        if (known != null) {
            return known;
        }
        if (targets.size() >= MAX_TARGETS) {
            key = OVERFLOW;
        }
        Target made = targets.computeIfAbsent(key, Target::new);
        if (made.announced.compareAndSet(0, 1)) {
            listener.retryTarget(made.name, made::tokens);
        }
        return made;
    }

    /** The names of the targets tracked so far. */
    public java.util.List<String> targets() {
        return java.util.List.copyOf(targets.keySet());
    }

    public RetryThrottling throttling() {
        return throttling;
    }

    /** One downstream target's token bucket and retry budget. */
    public final class Target {

        private final String name;
        private final AtomicInteger announced = new AtomicInteger();
        /** A6 keeps three decimals: tokens × 1000. */
        private final AtomicInteger milliTokens = new AtomicInteger(throttling.maxTokens() * 1000);
        private final int maxMilli = throttling.maxTokens() * 1000;
        private final int ratioMilli = (int) Math.round(throttling.tokenRatio() * 1000);
        private final long slotNanos = throttling.budgetWindow().toNanos() / SLOTS;
        /** Guarded by this: per slot, the slot's number (time / slotNanos), its calls and its retries. */
        private final long[] slotNumber = new long[SLOTS];
        private final long[] calls = new long[SLOTS];
        private final long[] retries = new long[SLOTS];

        private Target(String name) {
            this.name = name;
            java.util.Arrays.fill(slotNumber, Long.MIN_VALUE);
        }

        public String name() {
            return name;
        }

        /** Tokens in the bucket, 0 to max-tokens. */
        public double tokens() {
            return milliTokens.get() / 1000.0;
        }

        /** A6: a failed attempt (UNAVAILABLE, or any answer with pushback) costs one token. */
        public void failed() {
            milliTokens.accumulateAndGet(1000, (tokens, cost) -> Math.max(0, tokens - cost));
        }

        /** A6: a successful attempt puts token-ratio back. */
        public void succeeded() {
            milliTokens.accumulateAndGet(ratioMilli, (tokens, gain) -> Math.min(maxMilli, tokens + gain));
        }

        /** A6: retries stop while tokens ≤ max-tokens / 2. */
        public boolean tokensAllowRetry() {
            return milliTokens.get() * 2 > maxMilli;
        }

        /** A first attempt was sent: it adds to the calls the retry budget is a percentage of. */
        public synchronized void called() {
            calls[slot(nanoClock.getAsLong())]++;
        }

        /**
         * Whether the retry budget has room for one more retry now, and if so takes it: retries of
         * the window + 1 ≤ budget-percent of its calls + min-retries-per-second × window.
         */
        public synchronized boolean tryTakeRetry() {
            long now = nanoClock.getAsLong();
            int current = slot(now);
            long windowCalls = 0;
            long windowRetries = 0;
            for (int i = 0; i < SLOTS; i++) {
                windowCalls += calls[i];
                windowRetries += retries[i];
            }
            if (windowRetries + 1 > throttling.retriesAllowed(windowCalls) + 1e-9) {
                return false;
            }
            retries[current]++;
            return true;
        }

        /** Both rules at once: the bucket above half, then room in the budget (taken when both allow). */
        public boolean tryAcquireRetry() {
            if (!enforcing) {
                return true;
            }
            return tokensAllowRetry() && tryTakeRetry();
        }

        /** Retries the budget would allow now, for tests and logs. */
        public synchronized long retriesInWindow() {
            slot(nanoClock.getAsLong());
            long sum = 0;
            for (long r : retries) {
                sum += r;
            }
            return sum;
        }

        /** The slot of {@code now}, after clearing every slot that has left the window. Guarded by this. */
        private int slot(long now) {
            long number = Math.floorDiv(now, slotNanos);
            for (int i = 0; i < SLOTS; i++) {
                if (slotNumber[i] <= number - SLOTS) {
                    slotNumber[i] = Long.MIN_VALUE;
                    calls[i] = 0;
                    retries[i] = 0;
                }
            }
            int index = (int) Math.floorMod(number, (long) SLOTS);
            if (slotNumber[index] != number) {
                slotNumber[index] = number;
                calls[index] = 0;
                retries[index] = 0;
            }
            return index;
        }

        @Override
        public String toString() {
            return "Target[" + name + ", tokens=" + tokens() + "]";
        }
    }
}
