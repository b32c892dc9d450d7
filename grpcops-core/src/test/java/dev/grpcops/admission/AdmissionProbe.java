package dev.grpcops.admission;

/** What tests and simulations outside this package may ask of admission's bookkeeping. */
public final class AdmissionProbe {

    private AdmissionProbe() {}

    /** What is wrong with {@code admission}'s seats and queues now, or null. */
    public static String invariantViolation(Admission admission) {
        return admission.invariantViolation();
    }
}
