package dev.grpcops.testing;

import dev.grpcops.budget.Budget;
import dev.grpcops.budget.BudgetListener;
import dev.grpcops.budget.LedgerLine;
import dev.grpcops.retry.RetryListener;
import dev.grpcops.retry.RetryOutcome;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;

/** Remembers what the budget layer and the retries told it, for tests to read. */
public final class RecordingListener implements BudgetListener, RetryListener {

    public record Arrival(String method, Duration remaining, boolean defaulted) {}

    public record Downstream(String method, Duration deadline) {}

    public final List<Arrival> arrivals = new CopyOnWriteArrayList<>();
    public final List<Downstream> downstream = new CopyOnWriteArrayList<>();
    public final List<String> notSent = new CopyOnWriteArrayList<>();
    public final AtomicInteger retriesAttempted = new AtomicInteger();
    public final AtomicInteger retriesRefused = new AtomicInteger();
    public final Map<RetryOutcome, AtomicInteger> outcomes = new ConcurrentHashMap<>();
    /** Each served call's ledger line, as its hop answered it. */
    public final List<LedgerLine> answered = new CopyOnWriteArrayList<>();

    @Override
    public void arrived(String method, Budget budget) {
        arrivals.add(new Arrival(method, budget.remaining(), budget.defaulted()));
    }

    @Override
    public void handedDownstream(String method, Duration deadline) {
        downstream.add(new Downstream(method, deadline));
    }

    @Override
    public void answered(String method, LedgerLine line) {
        answered.add(line);
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

    public int outcomes(RetryOutcome outcome) {
        AtomicInteger count = outcomes.get(outcome);
        return count == null ? 0 : count.get();
    }
}
