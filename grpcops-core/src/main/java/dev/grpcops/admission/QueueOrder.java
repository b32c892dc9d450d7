package dev.grpcops.admission;

/** The order in which the calls waiting in one fair queue are served (design §9). */
public enum QueueOrder {

    /**
     * Earliest deadline first: the call with the least budget left is served first (ties in the order
     * they came), and a call whose turn comes when its remaining budget no longer covers its level's
     * measured service time is answered {@link RejectReason#CANNOT_FINISH} instead of served too late.
     */
    DEADLINE,
    /** First come, first served, each call served when its turn comes however little budget it has left. */
    ARRIVAL
}
