package dev.grpcops.retry;

import dev.grpcops.deadline.Budget;
import dev.grpcops.deadline.BudgetListener;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;

/** Remembers what the budget layer and the retries told it, for tests to read. */
final class RecordingListener implements BudgetListener, RetryListener {

    record Arrival(String method, Duration remaining, boolean defaulted) {}

    record Downstream(String method, Duration deadline) {}

    final List<Arrival> arrivals = new CopyOnWriteArrayList<>();
    final List<Downstream> downstream = new CopyOnWriteArrayList<>();
    final List<String> notSent = new CopyOnWriteArrayList<>();
    final AtomicInteger retriesAttempted = new AtomicInteger();
    final AtomicInteger retriesRefused = new AtomicInteger();
    final Map<RetryOutcome, AtomicInteger> outcomes = new ConcurrentHashMap<>();

    @Override
    public void arrived(String method, Budget budget) {
        arrivals.add(new Arrival(method, budget.remaining(), budget.defaulted()));
    }

    @Override
    public void handedDownstream(String method, Duration deadline) {
        downstream.add(new Downstream(method, deadline));
    }

    @Override
    public void notSent(String method) {
        notSent.add(method);
    }

    @Override
    public void outcome(String target, RetryOutcome outcome) {
        outcomes.computeIfAbsent(outcome, o -> new AtomicInteger()).incrementAndGet();
        if (outcome == RetryOutcome.ATTEMPTED || outcome == RetryOutcome.REFUSED) {
            (outcome == RetryOutcome.ATTEMPTED ? retriesAttempted : retriesRefused).incrementAndGet();
        }
    }

    int outcomes(RetryOutcome outcome) {
        AtomicInteger count = outcomes.get(outcome);
        return count == null ? 0 : count.get();
    }
}
