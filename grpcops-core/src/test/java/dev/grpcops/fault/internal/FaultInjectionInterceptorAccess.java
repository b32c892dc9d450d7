package dev.grpcops.fault.internal;

import dev.grpcops.fault.Faults;

/** The release-time rule, for the fault tests beside it. */
public final class FaultInjectionInterceptorAccess {

    private FaultInjectionInterceptorAccess() {}

    public static long releaseAt(Faults faults, long arrivalNanos, long now) {
        return FaultInjectionInterceptor.releaseAt(faults, arrivalNanos, now);
    }
}
