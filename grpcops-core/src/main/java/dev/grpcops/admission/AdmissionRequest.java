package dev.grpcops.admission;

/**
 * A call offered to {@link Admission}. Admission calls exactly one of {@link #start} (a seat is the
 * call's: run it, and release the ticket exactly once when it ends) and {@link #reject}, either at
 * once from {@link Admission#offer} or later, from the thread that freed a seat or from admission's
 * timer. No thread waits for either. Both are called outside admission's lock.
 */
public interface AdmissionRequest {

    /** The flow this call belongs to (fair queuing's unit), asked only when the call has to queue. */
    String flowId();

    /** The call has a seat: start it, and {@link Ticket#release()} the ticket once it has ended. */
    void start(Ticket ticket);

    /** The call is turned away: tell its caller why and when to come back. */
    void reject(Rejection rejection);

    /**
     * What the call's allowance has already set aside, out of its budget, for the calls it makes
     * downstream: for a service that calls downstream, the budget rules' min-downstream; 0 by
     * default. Whether a queued call can still finish is judged by its own work (measured without
     * the time calls wait on their downstream calls) and whatever of its downstream time exceeds
     * this, so that the downstream time is not counted twice.
     */
    default long downstreamSetAsideNanos() {
        return 0;
    }

    /**
     * Whether this is one of the process's own warm-up calls, which run on a JIT-cold server: its
     * time then measures nothing of the server, neither for the level's service time nor for an
     * adaptive limit. False by default.
     */
    default boolean warmUp() {
        return false;
    }
}
