package dev.grpcops.admission;

import java.util.List;

/** A call offered to admission that records what happened to it. */
class TestCall extends AdmissionRequest {

    private final String flow;
    private final List<TestCall> startOrder;
    boolean started;
    Rejection rejection;

    TestCall(Admission.Level level, String flow, long allowanceMillis, List<TestCall> startOrder) {
        super(level, allowanceMillis * 1_000_000L);
        this.flow = flow;
        this.startOrder = startOrder;
    }

    String flow() {
        return flow;
    }

    @Override
    protected String flowId() {
        return flow;
    }

    @Override
    protected void start() {
        started = true;
        startOrder.add(this);
    }

    @Override
    protected void reject(Rejection rejection) {
        this.rejection = rejection;
    }

    @Override
    public String toString() {
        return flow;
    }
}
