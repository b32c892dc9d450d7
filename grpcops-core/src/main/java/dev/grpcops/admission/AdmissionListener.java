package dev.grpcops.admission;

/**
 * What admission reports, for metrics. Called outside admission's lock, on the thread that
 * dispatched or rejected the call; implementations must be quick and must not block.
 */
public interface AdmissionListener {

    AdmissionListener NONE = new AdmissionListener() {};

    /** A call got a seat at {@code level} after waiting {@code waitNanos} (0 when a seat was free). */
    default void dispatched(String level, long waitNanos) {}

    /** A call was turned away at {@code level}. */
    default void rejected(String level, RejectReason reason) {}
}
