package dev.grpcops.admission;

/** A call's place in {@link Admission}: in a queue first, then its seat. */
public interface Ticket {

    /**
     * Frees the call's seat once it has ended, served and answered OK: its service time is a sample of
     * the {@link AdaptiveLimit}, if there is one. Later calls, and calls before it started, do nothing.
     */
    default void release() {
        release(0);
    }

    /**
     * As {@link #release()}, for a call that spent {@code waitedNanos} of its seat's time waiting on
     * others (its downstream calls, fault injection holding its answer): the sample leaves that time
     * out, and measures this server's own latency.
     */
    void release(long waitedNanos);

    /**
     * Frees the seat of a call that failed, was cancelled or was not served: its time says nothing of
     * how fast the server is, and is no sample. {@code waitedNanos} as for {@link #release(long)}.
     */
    void releaseWithoutSample(long waitedNanos);

    /** As {@link #releaseWithoutSample(long)}, for a call that waited on nothing. */
    default void releaseWithoutSample() {
        releaseWithoutSample(0);
    }

    /**
     * The caller cancelled: a queued call leaves its queue at once (counted as {@code cancelled}),
     * and its flow's queue is charged as for a call served; returns false if the call had already
     * started or ended, and then nothing changes.
     */
    boolean cancel();

    /**
     * The call's deadline passed while it waited: it leaves its queue at once (counted as {@code
     * cancelled}), and its flow is not charged for it: the server kept it waiting. As {@link
     * #cancel()} otherwise.
     */
    default boolean deadlinePassed() {
        return cancel();
    }
}
