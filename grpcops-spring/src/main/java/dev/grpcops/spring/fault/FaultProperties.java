package dev.grpcops.spring.fault;

import dev.grpcops.fault.Faults;
import dev.grpcops.fault.InvalidFaultException;
import java.time.Duration;
import org.springframework.boot.context.properties.ConfigurationProperties;

/**
 * Faults this replica injects into the calls it serves, under {@code grpcops.fault}: nothing unless
 * set here or at run time ({@code grpcops fault HOST:PORT ...}, an admin call).
 */
@ConfigurationProperties("grpcops.fault")
public class FaultProperties {

    /** Whether fault injection (and its admin service grpcops.v1.Faults) is there at all; nothing is injected unless asked. */
    private boolean enabled = true;

    /** The replica's name in the fault service's answers and the log; by default env POD_NAME, else HOSTNAME, else "local". */
    private String replica;

    /** Extra delay before every answer (0-60s). */
    private Duration delay = Duration.ZERO;

    /** Answers are held this long at the start of every stall-every (0-60s; a periodic pause, as of a long GC). */
    private Duration stall = Duration.ZERO;

    /** The period of the stalls, longer than stall (at most 1h). */
    private Duration stallEvery = Duration.ZERO;

    /**
     * CPU work before every call's handler runs (0-1s): each call costs the replica that much more of a
     * core, so that its capacity falls (delay and stall only hold answers).
     */
    private Duration work = Duration.ZERO;

    /** Share of calls failed at once (0-1), with error-code. */
    private double errorRatio = 0.0;

    /**
     * What the failed calls end with: UNAVAILABLE (a replica down), INTERNAL, UNKNOWN or DATA_LOSS (a
     * broken replica), RESOURCE_EXHAUSTED (a replica shedding load).
     */
    private io.grpc.Status.Code errorCode = io.grpc.Status.Code.UNAVAILABLE;

    public Duration getWork() {
        return work;
    }

    public void setWork(Duration work) {
        this.work = work;
    }

    public io.grpc.Status.Code getErrorCode() {
        return errorCode;
    }

    public void setErrorCode(io.grpc.Status.Code errorCode) {
        this.errorCode = errorCode;
    }

    public boolean isEnabled() {
        return enabled;
    }

    public void setEnabled(boolean enabled) {
        this.enabled = enabled;
    }

    public String getReplica() {
        return replica;
    }

    public void setReplica(String replica) {
        this.replica = replica;
    }

    public Duration getDelay() {
        return delay;
    }

    public void setDelay(Duration delay) {
        this.delay = delay;
    }

    public Duration getStall() {
        return stall;
    }

    public void setStall(Duration stall) {
        this.stall = stall;
    }

    public Duration getStallEvery() {
        return stallEvery;
    }

    public void setStallEvery(Duration stallEvery) {
        this.stallEvery = stallEvery;
    }

    public double getErrorRatio() {
        return errorRatio;
    }

    public void setErrorRatio(double errorRatio) {
        this.errorRatio = errorRatio;
    }

    /** The core's faults of these properties, a bad value named by its property. */
    public Faults toFaults() {
        try {
            return Faults.builder()
                    .delay(delay)
                    .stall(stall, stallEvery)
                    .errorRatio(errorRatio)
                    .errorCode(errorCode)
                    .work(work)
                    .build();
        } catch (InvalidFaultException e) {
            throw new IllegalArgumentException("grpcops.fault." + e.getMessage());
        }
    }
}
