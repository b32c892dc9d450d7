package dev.grpcops.fault;

/** What fault injection tells, for metrics and logs. Called on the call's thread; must not block. */
public interface FaultListener {

    FaultListener NONE = new FaultListener() {};

    /** The faults injected changed (at start, or by an admin call). */
    default void changed(Faults faults) {}

    /** A call was failed at once with UNAVAILABLE. */
    default void failed() {}

    /** A call's answer was held by the delay, or by a stall, or both. */
    default void held(boolean delayed, boolean stalled) {}

    /** A call's thread did the injected CPU work before its handler ran. */
    default void worked() {}
}
