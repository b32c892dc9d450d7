package dev.grpcops.admission;

/** Admission's bookkeeping of one offered call; every field is guarded by the admission's lock. */
final class OfferedCall implements Ticket {

    enum State {
        NEW,
        QUEUED,
        EXECUTING,
        DONE
    }

    final Admission.Level level;
    final AdmissionRequest request;
    /** How long the call may wait and still do its work (its budget minus what the work needs). */
    final long allowanceNanos;
    /** What the allowance set aside for its downstream calls ({@link AdmissionRequest#downstreamSetAsideNanos}). */
    final long setAsideNanos;
    /** The seats it takes while it runs (a call that fans out takes one per downstream call). */
    final int width;
    /** One of the process's own warm-up calls ({@link AdmissionRequest#warmUp}): its time is no measure. */
    final boolean warmUp;
    /** The seats it holds once seated: its width, at most the limit at that moment. */
    int seats;

    State state = State.NEW;
    long offeredNanos;
    /** The latest it may start and still do its work: offered plus allowance (saturated). */
    long startByNanos;
    /** Its place in the order calls were queued, for ties. */
    long sequence;

    long startedNanos;
    long estimateAtDispatchNanos;
    QueueSet.FairQueue queue;
    String flow;
    Runnable cancelTimeout;
    /** Set when its turn came too late to finish: why it is answered instead of started. */
    Rejection rejection;

    OfferedCall(Admission.Level level, AdmissionRequest request, long allowanceNanos, int width) {
        this.level = level;
        this.request = request;
        this.allowanceNanos = allowanceNanos;
        this.setAsideNanos = Math.max(0, request.downstreamSetAsideNanos());
        this.width = width;
        this.warmUp = request.warmUp();
    }

    @Override
    public void release(long waitedNanos) {
        level.admission().release(this, waitedNanos, true);
    }

    @Override
    public void releaseWithoutSample(long waitedNanos) {
        level.admission().release(this, waitedNanos, false);
    }

    @Override
    public boolean cancel() {
        return level.admission().cancel(this, true);
    }

    @Override
    public boolean deadlinePassed() {
        return level.admission().cancel(this, false);
    }

    @Override
    public String toString() {
        return "OfferedCall[" + level.name() + ", " + state + "]";
    }
}
