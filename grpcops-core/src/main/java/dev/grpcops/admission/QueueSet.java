package dev.grpcops.admission;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.PriorityQueue;
import java.util.Queue;

/**
 * Fair queuing inside one priority level (after Kubernetes' queueset): flows are dealt a hand of
 * queues and join the shortest, staying on it while they have calls waiting; the queue whose next
 * call would finish first in virtual time is served next. Virtual time advances, like APF's, at
 * {@code min(demand, seats) / active queues} per unit of real time, and every dispatch charges its
 * queue the level's measured service time, corrected by the real one when the call ends. A flow
 * that sends more only lengthens its own queue. Within a queue, calls are served in the
 * {@link QueueOrder}: the one that must start soonest first, or as they came. Guarded by the
 * admission's lock.
 */
final class QueueSet {

    /** Least time left first; among equals, as they came. */
    private static final Comparator<OfferedCall> EARLIEST_DEADLINE = Comparator.<OfferedCall>comparingLong(
                    ticket -> ticket.startByNanos)
            .thenComparingLong(ticket -> ticket.sequence);

    static final class FairQueue {
        final int index;
        final Queue<OfferedCall> waiting;
        int executing;
        /** Virtual time at which this queue's next call would start. */
        double nextDispatchR;

        FairQueue(int index, QueueOrder order) {
            this.index = index;
            this.waiting = order == QueueOrder.DEADLINE ? new PriorityQueue<>(EARLIEST_DEADLINE) : new ArrayDeque<>();
        }

        boolean idle() {
            return waiting.isEmpty() && executing == 0;
        }
    }

    /** A flow with calls waiting, and the queue it sticks to until it has none. */
    private static final class Flow {
        final FairQueue queue;
        int waiting;

        Flow(FairQueue queue) {
            this.queue = queue;
        }
    }

    private final FairQueue[] queues;
    private final ShuffleSharding dealer;
    private final int queueLengthLimit;
    private final boolean earliestDeadlineFirst;
    private final Map<String, Flow> flows = new HashMap<>();
    private double virtualTime;
    private long lastSync;
    private boolean synced;
    private int waiting;
    private int executing;
    private int activeQueues;

    QueueSet(int queues, int handSize, int queueLengthLimit, QueueOrder order) {
        this.queues = new FairQueue[queues];
        for (int i = 0; i < queues; i++) {
            this.queues[i] = new FairQueue(i, order);
        }
        this.dealer = new ShuffleSharding(queues, handSize);
        this.queueLengthLimit = queueLengthLimit;
        this.earliestDeadlineFirst = order == QueueOrder.DEADLINE;
    }

    /** Advances virtual time to {@code now}; {@code seats} is what the level may run at once. */
    void sync(long now, int seats) {
        if (synced && activeQueues > 0) {
            long delta = now - lastSync;
            if (delta > 0) {
                int demand = waiting + executing;
                virtualTime += (double) delta * Math.min(demand, Math.max(1, seats)) / activeQueues;
            }
        }
        lastSync = now;
        synced = true;
    }

    /** The queue {@code flow} would join: the one it waits on, else the shortest of its hand. */
    FairQueue choose(String flow) {
        Flow known = flows.get(flow);
        if (known != null) {
            return known.queue;
        }
        FairQueue best = null;
        for (int index : dealer.deal(flow)) {
            FairQueue candidate = queues[index];
            if (best == null
                    || candidate.waiting.size() < best.waiting.size()
                    || candidate.waiting.size() == best.waiting.size() && candidate.executing < best.executing) {
                best = candidate;
            }
        }
        return best;
    }

    boolean full(FairQueue queue) {
        return queue.waiting.size() >= queueLengthLimit;
    }

    /**
     * Calls dispatched from this level before {@code joining}, were it to join {@code queue} now: one
     * round of fair order serves one call of every queue that still has one.
     */
    int dispatchesAhead(FairQueue queue, OfferedCall joining) {
        int rounds = callsAhead(queue, joining) + 1;
        int ahead = rounds;
        for (FairQueue other : queues) {
            if (other != queue) {
                ahead += Math.min(other.waiting.size(), rounds);
            }
        }
        return ahead;
    }

    /** The calls of {@code queue} to be served before {@code joining}: all of them, or those due no later. */
    private int callsAhead(FairQueue queue, OfferedCall joining) {
        if (!earliestDeadlineFirst) {
            return queue.waiting.size();
        }
        int ahead = 0;
        for (OfferedCall waiting : queue.waiting) {
            if (EARLIEST_DEADLINE.compare(waiting, joining) < 0) {
                ahead++;
            }
        }
        return ahead;
    }

    void add(OfferedCall request, FairQueue queue, String flow) {
        if (queue.idle()) {
            // No credit for idle time, and no forgiveness of what its calls were charged before.
            queue.nextDispatchR = Math.max(queue.nextDispatchR, virtualTime);
            activeQueues++;
        }
        queue.waiting.add(request);
        waiting++;
        flows.computeIfAbsent(flow, f -> new Flow(queue)).waiting++;
        request.queue = queue;
        request.flow = flow;
    }

    /** The queue whose next call is next in fair order; null if none waits. */
    private FairQueue nextQueue() {
        FairQueue next = null;
        for (FairQueue queue : queues) {
            if (!queue.waiting.isEmpty() && (next == null || queue.nextDispatchR < next.nextDispatchR)) {
                next = queue;
            }
        }
        return next;
    }

    /** The next call in fair order, left waiting; null if none waits. */
    OfferedCall peek() {
        FairQueue next = nextQueue();
        return next == null ? null : next.waiting.peek();
    }

    /**
     * The first call in fair order that fits in {@code freeSeats} (a call takes its width, at most
     * {@code limit}): the next one, unless it is wider than the seats free; then the first that fits
     * of the queue that comes first among those that have one. A wide call waiting for seats never
     * holds back a narrower one that fits. Null if none fits.
     */
    OfferedCall nextFitting(int freeSeats, int limit) {
        FairQueue first = nextQueue();
        if (first == null) {
            return null;
        }
        OfferedCall head = first.waiting.peek();
        if (fits(head, freeSeats, limit)) {
            return head;
        }
        OfferedCall chosen = null;
        double chosenR = Double.MAX_VALUE;
        for (FairQueue queue : queues) {
            if (queue.waiting.isEmpty() || queue.nextDispatchR >= chosenR) {
                continue;
            }
            OfferedCall fitting = firstFitting(queue, freeSeats, limit);
            if (fitting != null) {
                chosen = fitting;
                chosenR = queue.nextDispatchR;
            }
        }
        return chosen;
    }

    private static boolean fits(OfferedCall request, int freeSeats, int limit) {
        return Math.min(request.width, limit) <= freeSeats;
    }

    /** {@code queue}'s first call in its own order that fits; null if none does. */
    private OfferedCall firstFitting(FairQueue queue, int freeSeats, int limit) {
        OfferedCall first = null;
        for (OfferedCall waiting : queue.waiting) {
            if (!fits(waiting, freeSeats, limit)) {
                continue;
            }
            if (!earliestDeadlineFirst) {
                return waiting; // an ArrayDeque iterates in the order calls came
            }
            if (first == null || EARLIEST_DEADLINE.compare(waiting, first) < 0) {
                first = waiting; // a PriorityQueue iterates in no order: the earliest of those that fit
            }
        }
        return first;
    }

    /**
     * Takes {@code request} (a waiting call, usually the next in fair order) out of its queue to be
     * served, charging the queue {@code estimateNanos} for each of its seats.
     */
    void dispatch(OfferedCall request, long estimateNanos) {
        FairQueue queue = request.queue;
        if (queue.waiting.peek() == request) {
            queue.waiting.poll();
        } else {
            queue.waiting.remove(request);
        }
        waiting--;
        leaveFlow(request);
        queue.executing++;
        executing++;
        long charged = estimateNanos * request.width;
        queue.nextDispatchR += charged;
        request.estimateAtDispatchNanos = charged;
    }

    /**
     * A waiting call leaves its queue without being served. {@code chargedNanos} per seat is charged
     * to its queue: what a call served would cost, when its caller chose to leave (its flow does not
     * keep its queue first by queueing calls and cancelling them); nothing when the server failed it
     * (it timed out, or came too late to finish), which would push a flow already kept waiting
     * further back, and under overload into more time-outs.
     */
    void remove(OfferedCall request, long chargedNanos) {
        FairQueue queue = request.queue;
        if (queue.waiting.remove(request)) {
            waiting--;
            leaveFlow(request);
            queue.nextDispatchR += (double) chargedNanos * request.width;
            if (queue.idle()) {
                activeQueues--;
            }
        }
    }

    /** A call dispatched from a queue ended after {@code serviceNanos}: its queue pays what its seats really used. */
    void finished(OfferedCall request, long serviceNanos) {
        FairQueue queue = request.queue;
        queue.executing--;
        executing--;
        queue.nextDispatchR -= request.estimateAtDispatchNanos - serviceNanos * request.width;
        if (queue.idle()) {
            activeQueues--;
        }
    }

    /** Empties every queue, for the drain. */
    List<OfferedCall> removeAll() {
        List<OfferedCall> all = new ArrayList<>(waiting);
        for (FairQueue queue : queues) {
            all.addAll(queue.waiting);
            queue.waiting.clear();
        }
        flows.clear();
        waiting = 0;
        activeQueues = 0;
        for (FairQueue queue : queues) {
            if (!queue.idle()) {
                activeQueues++;
            }
        }
        return all;
    }

    int waiting() {
        return waiting;
    }

    private void leaveFlow(OfferedCall request) {
        Flow flow = flows.get(request.flow);
        if (flow != null && --flow.waiting == 0) {
            flows.remove(request.flow);
        }
    }
}
