package dev.grpcops.admission;

/** Why admission turned a call away; {@link #label()} is the {@code reason} label of the metrics. */
public enum RejectReason {

    /** The queue the call's flow drew was full. */
    QUEUE_FULL("queue-full"),
    /** Every seat was taken and the call's level does not queue. */
    CONCURRENCY_LIMIT("concurrency-limit"),
    /** The call waited in its queue as long as its deadline (or max-wait) allowed. */
    TIME_OUT("time-out"),
    /** The caller cancelled the call while it waited. */
    CANCELLED("cancelled"),
    /** The call's budget could not cover its predicted wait plus the work it needs. */
    DEADLINE_INFEASIBLE("deadline-infeasible"),
    /**
     * When its turn came, the call's remaining budget no longer covered its level's measured service
     * time ({@link QueueOrder#DEADLINE}): answered {@code DEADLINE_EXCEEDED} rather than served too late.
     */
    CANNOT_FINISH("cannot-finish"),
    /** The server began to drain: queued calls end UNAVAILABLE so clients go to another replica. */
    DRAINING("draining");

    private final String label;

    RejectReason(String label) {
        this.label = label;
    }

    public String label() {
        return label;
    }
}
