package dev.grpcops.admission;

/** A call's place in {@link Admission}: in a queue first, then its seat. */
public interface AdmissionTicket {

    /** Frees the call's seat once it has ended; later calls, and calls before it started, do nothing. */
    void release();

    /**
     * The caller cancelled: a queued call leaves its queue at once (counted as {@code cancelled});
     * returns false if the call had already started or ended, and then nothing changes.
     */
    boolean cancel();
}
