package dev.grpcops.admission;

/**
 * A call offered to {@link Admission}. Admission calls exactly one of {@link #start()} (a seat is
 * the call's: run it, and call {@link #release()} exactly once when it ends) and
 * {@link #reject(Rejection)}, either at once from {@link Admission#offer} or later, from the thread
 * that freed a seat or from admission's timer. No thread waits for either.
 */
public abstract class AdmissionRequest {

    enum State { NEW, QUEUED, EXECUTING, DONE }

    final Admission.Level level;
    /** How long the call may wait and still do its work (its budget minus what the work needs). */
    final long allowanceNanos;

    // Guarded by the admission's lock.
    State state = State.NEW;
    long offeredNanos;
    long startedNanos;
    long estimateAtDispatchNanos;
    QueueSet.FairQueue queue;
    String flow;
    Runnable cancelTimeout;

    protected AdmissionRequest(Admission.Level level, long allowanceNanos) {
        this.level = level;
        this.allowanceNanos = allowanceNanos;
    }

    /** The flow this call belongs to, asked only when the call has to queue. */
    protected abstract String flowId();

    /** The call has a seat: start it. Called once, outside admission's lock. */
    protected abstract void start();

    /** The call is turned away. Called once, outside admission's lock. */
    protected abstract void reject(Rejection rejection);

    /** Frees the call's seat once it has ended; later calls do nothing. */
    public final void release() {
        level.admission().release(this);
    }

    /**
     * The caller cancelled: a queued call leaves its queue at once (counted as {@code cancelled});
     * returns false if the call had already started or ended, and then nothing changes.
     */
    public final boolean cancel() {
        return level.admission().cancel(this);
    }
}
