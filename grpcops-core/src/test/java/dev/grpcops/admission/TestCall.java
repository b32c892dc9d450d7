package dev.grpcops.admission;

import java.util.List;

/** A call offered to admission that records what happened to it. */
class TestCall implements AdmissionRequest {

    private final String flow;
    private final List<TestCall> startOrder;
    final Admission.Level level;
    final long allowanceNanos;
    int width = 1;
    long downstreamSetAsideNanos;
    boolean warmUp;
    Ticket ticket;
    boolean started;
    boolean released;
    Rejection rejection;

    TestCall(Admission.Level level, String flow, long allowanceMillis, List<TestCall> startOrder) {
        this.level = level;
        this.allowanceNanos = allowanceMillis * 1_000_000L;
        this.flow = flow;
        this.startOrder = startOrder;
    }

    /** Offers this call to its level's admission; returns it. */
    TestCall offer() {
        Ticket offered = level.admission().offer(level, allowanceNanos, width, this);
        if (ticket == null) {
            ticket = offered;
        }
        return this;
    }

    /** This call, taking {@code seats} seats. */
    TestCall wide(int seats) {
        this.width = seats;
        return this;
    }

    String flow() {
        return flow;
    }

    void release() {
        released = true;
        ticket.release();
    }

    /** Ends the call, which waited {@code millis} of its time in its seat on its downstream calls. */
    void releaseAfterWaitingDownstream(long millis) {
        ticket.release(millis * 1_000_000L);
    }

    boolean cancel() {
        return ticket.cancel();
    }

    @Override
    public String flowId() {
        return flow;
    }

    @Override
    public void start(Ticket ticket) {
        this.ticket = ticket;
        started = true;
        startOrder.add(this);
    }

    @Override
    public void reject(Rejection rejection) {
        this.rejection = rejection;
    }

    @Override
    public long downstreamSetAsideNanos() {
        return downstreamSetAsideNanos;
    }

    @Override
    public boolean warmUp() {
        return warmUp;
    }

    @Override
    public String toString() {
        return flow;
    }
}
