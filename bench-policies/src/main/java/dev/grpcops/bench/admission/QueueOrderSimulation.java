package dev.grpcops.bench.admission;

import dev.grpcops.admission.Admission;
import dev.grpcops.admission.AdmissionConfig;
import dev.grpcops.admission.AdmissionRequest;
import dev.grpcops.admission.PriorityLevelConfig;
import dev.grpcops.admission.QueueOrder;
import dev.grpcops.admission.RejectReason;
import dev.grpcops.admission.Rejection;
import dev.grpcops.admission.Ticket;
import java.time.Duration;
import java.util.EnumMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.PriorityQueue;
import java.util.SplittableRandom;

/**
 * Admission's queue orders side by side under a flood (design §19): the real {@link Admission} on a
 * simulated clock, so that both orders meet exactly the same calls and the result does not depend on
 * the machine. A server of {@code seats} seats, each call needing 10 ms plus an exponential 10 ms of
 * work; three noisy callers offering together {@code flood} × its capacity, with budgets anywhere
 * from 50 ms to 1 s (calls that reach a hop have spent different parts of their budget upstream);
 * one polite caller at 5 % of capacity with budgets of 50–500 ms. A caller stops waiting at its
 * deadline: a queued call is cancelled then, and a running one too (its seat was held for nothing).
 *
 * <p>Printed per order: the share of the polite caller's calls answered within their deadline, the
 * flood's calls done in time per second, the seat time spent on calls that ended past their deadline
 * (work for calls already lost), and how admission answered the others. {@code --spread true}: the
 * flood names a new caller on every call, so that its calls share every queue with the polite ones.
 *
 * <pre>java -cp bench-policies/target/grpcops-bench-policies.jar dev.grpcops.bench.admission.QueueOrderSimulation [--flood 2.0] [--seconds 60] [--seats 8] [--seed 1] [--spread false]</pre>
 */
public final class QueueOrderSimulation {

    private static final long MS = 1_000_000L;

    /** One run's outcome. */
    record Result(
            QueueOrder order,
            int politeOffered,
            int politeInTime,
            int floodInTime,
            double seconds,
            long lateSeatNanos,
            long busySeatNanos,
            int late,
            Map<RejectReason, Integer> rejected) {

        double politeShare() {
            return (double) politeInTime / politeOffered;
        }
    }

    public static void main(String[] args) {
        double flood = 2.0;
        int seconds = 60;
        int seats = 8;
        long seed = 1;
        boolean spread = false;
        for (int i = 0; i < args.length; i += 2) {
            String value = i + 1 < args.length ? args[i + 1] : null;
            if (value == null) {
                throw new IllegalArgumentException(args[i] + " needs a value");
            }
            switch (args[i]) {
                case "--flood" -> flood = Double.parseDouble(value);
                case "--seconds" -> seconds = Integer.parseInt(value);
                case "--seats" -> seats = Integer.parseInt(value);
                case "--seed" -> seed = Long.parseLong(value);
                case "--spread" -> spread = Boolean.parseBoolean(value);
                default -> throw new IllegalArgumentException("unknown argument: " + args[i]);
            }
        }
        System.out.printf(
                Locale.ROOT,
                "%d seats, work 10 ms + exp(10 ms); flood %.1f x capacity from %s (budgets 50-1000 ms),"
                        + " polite caller 5 %% of capacity (budgets 50-500 ms); %d simulated s, seed %d%n%n",
                seats,
                flood,
                spread ? "a new caller name per call" : "3 callers",
                seconds,
                seed);
        System.out.println(
                "| order | polite calls in time | flood calls in time /s | seat time on calls past their deadline"
                        + " | calls past their deadline | answered by admission |");
        System.out.println("|---|---|---|---|---|---|");
        for (QueueOrder order : List.of(QueueOrder.ARRIVAL, QueueOrder.DEADLINE)) {
            Result result = run(order, flood, spread, seconds, seats, seed);
            StringBuilder answered = new StringBuilder();
            result.rejected()
                    .forEach((reason, count) -> answered.append(answered.length() == 0 ? "" : ", ")
                            .append(reason.label())
                            .append(' ')
                            .append(count));
            System.out.printf(
                    Locale.ROOT,
                    "| %s | %.1f %% (%d of %d) | %.0f | %.1f %% of busy seat time | %d | %s |%n",
                    order.name().toLowerCase(Locale.ROOT),
                    100 * result.politeShare(),
                    result.politeInTime(),
                    result.politeOffered(),
                    result.floodInTime() / result.seconds(),
                    100.0 * result.lateSeatNanos() / Math.max(1, result.busySeatNanos()),
                    result.late(),
                    answered);
        }
    }

    /** Runs {@code seconds} of simulated traffic through admission in {@code order}. */
    static Result run(QueueOrder order, double flood, boolean spread, int seconds, int seats, long seed) {
        return new Run(order, flood, spread, seconds, seats, seed).result();
    }

    private static final class Run implements Admission.Timer {

        private final PriorityQueue<Event> events = new PriorityQueue<>();
        private final SplittableRandom random;
        private final Admission admission;
        private final Admission.Level level;
        private final Map<RejectReason, Integer> rejected = new EnumMap<>(RejectReason.class);
        private final QueueOrder order;
        private final double seconds;
        private long now;
        private long sequence;
        private int politeOffered;
        private int politeInTime;
        private int floodInTime;
        private long lateSeatNanos;
        private long busySeatNanos;
        private int late;

        private final boolean spread;

        Run(QueueOrder order, double flood, boolean spread, int seconds, int seats, long seed) {
            this.spread = spread;
            this.order = order;
            this.seconds = seconds;
            this.random = new SplittableRandom(seed);
            this.admission = Admission.builder(AdmissionConfig.builder()
                            .limit(seats)
                            .levels(List.of(PriorityLevelConfig.of("default", 1)))
                            .maxWait(Duration.ofSeconds(1))
                            .queueOrder(order)
                            .build())
                    .nanoClock(() -> now)
                    .timer(this)
                    .build();
            this.level = admission.level("default");
            double capacityPerSecond = seats / 0.020; // mean work 20 ms
            long end = seconds * 1_000L * MS;
            arrivals("polite", capacityPerSecond * 0.05, 50, 500, end);
            for (int i = 1; i <= 3; i++) {
                arrivals("noisy-" + i, capacityPerSecond * flood / 3, 50, 1_000, end);
            }
            while (!events.isEmpty()) {
                Event event = events.poll();
                now = event.at;
                if (!event.cancelled) {
                    event.action.run();
                }
            }
        }

        /** Schedules a caller's calls: Poisson arrivals at {@code rate}/s, budgets uniform in the range. */
        private void arrivals(String caller, double rate, long minBudgetMs, long maxBudgetMs, long end) {
            long at = 0;
            while (true) {
                at += (long) (-Math.log(1 - random.nextDouble()) / rate * 1e9);
                if (at >= end) {
                    return;
                }
                long budget = random.nextLong(minBudgetMs, maxBudgetMs + 1) * MS;
                long work = 10 * MS + (long) (-Math.log(1 - random.nextDouble()) * 10 * MS);
                // A flood that names a new caller on every call spreads over every queue of the level.
                String flow = spread && !caller.equals("polite") ? caller + "-" + sequence++ : caller;
                Call call = new Call(flow, budget, work);
                at(at, call::offer);
            }
        }

        private Event at(long time, Runnable action) {
            Event event = new Event(time, sequence++, action);
            events.add(event);
            return event;
        }

        @Override
        public Runnable schedule(Runnable task, long delayNanos) {
            Event event = at(now + delayNanos, task);
            return () -> event.cancelled = true;
        }

        Result result() {
            return new Result(
                    order,
                    politeOffered,
                    politeInTime,
                    floodInTime,
                    seconds,
                    lateSeatNanos,
                    busySeatNanos,
                    late,
                    rejected);
        }

        /** One call: offered, then started or answered by admission, or given up by its caller at its deadline. */
        private final class Call implements AdmissionRequest {
            final String caller;
            final long budget;
            final long work;
            long offeredAt;
            Ticket ticket;
            Event deadline;
            boolean done;

            Call(String caller, long budget, long work) {
                this.caller = caller;
                this.budget = budget;
                this.work = work;
            }

            void offer() {
                offeredAt = now;
                if (caller.equals("polite")) {
                    politeOffered++;
                }
                // The caller gives up at its deadline: a call still queued leaves its queue.
                deadline = at(now + budget, this::giveUp);
                Ticket offered = admission.offer(level, budget, this);
                if (ticket == null) {
                    ticket = offered;
                }
            }

            private void giveUp() {
                if (!done && ticket != null && ticket.cancel()) {
                    done = true;
                    rejected.merge(RejectReason.CANCELLED, 1, Integer::sum);
                }
            }

            @Override
            public String flowId() {
                return caller;
            }

            @Override
            public void start(Ticket seat) {
                this.ticket = seat;
                long startedAt = now;
                long finish = startedAt + work;
                long deadlineAt = offeredAt + budget;
                deadline.cancelled = true;
                if (finish <= deadlineAt) {
                    at(finish, () -> {
                        done = true;
                        busySeatNanos += work;
                        if (caller.equals("polite")) {
                            politeInTime++;
                        } else {
                            floodInTime++;
                        }
                        seat.release();
                    });
                } else {
                    // Its caller cancels at the deadline; the seat was held until then for nothing.
                    at(deadlineAt, () -> {
                        done = true;
                        late++;
                        lateSeatNanos += deadlineAt - startedAt;
                        busySeatNanos += deadlineAt - startedAt;
                        seat.release();
                    });
                }
            }

            @Override
            public void reject(Rejection rejection) {
                done = true;
                deadline.cancelled = true;
                rejected.merge(rejection.reason(), 1, Integer::sum);
            }
        }
    }

    private static final class Event implements Comparable<Event> {
        final long at;
        final long sequence;
        final Runnable action;
        boolean cancelled;

        Event(long at, long sequence, Runnable action) {
            this.at = at;
            this.sequence = sequence;
            this.action = action;
        }

        @Override
        public int compareTo(Event other) {
            int byTime = Long.compare(at, other.at);
            return byTime != 0 ? byTime : Long.compare(sequence, other.sequence);
        }
    }

    private QueueOrderSimulation() {}
}
