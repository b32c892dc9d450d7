package dev.grpcops.client;

import io.grpc.Metadata;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import org.jspecify.annotations.Nullable;

/**
 * What the end of a call says, and about whom: one vocabulary for outlier ejection, the
 * latency-aware balancer and hedging, so that none of them mistakes the caller's or the load's
 * doing for a broken replica (design §16).
 *
 * <ul>
 *   <li>Only {@link #REPLICA_FAILURE} counts against a replica (ejection, failure accrual).
 *   <li>{@link #OVERLOAD} (shedding) makes a replica look expensive to the picker and brings
 *       pushback, but never ejects it: ejecting under overload removes capacity when it is short.
 *   <li>{@link #CANCELLED}, {@link #DEADLINE} and {@link #RELAYED} say nothing about the replica.
 *   <li>{@link #ANSWERED} and {@link #APPLICATION_ERROR} are definitive: the replica worked, and a
 *       hedged call is decided by the first of them.
 * </ul>
 *
 * A hop that passes its downstream's failure on to its caller marks it with {@link #relay}, so that
 * its own caller does not eject a healthy middle tier for a failure further down (as Envoy tells
 * local-origin from external-origin errors).
 */
public enum CallOutcome {
    /** {@code OK}. */
    ANSWERED,
    /**
     * The server's definitive answer about the request ({@code NOT_FOUND}, {@code INVALID_ARGUMENT},
     * {@code FAILED_PRECONDITION}, {@code PERMISSION_DENIED}, ...): the replica worked.
     */
    APPLICATION_ERROR,
    /**
     * The replica is broken: {@code UNAVAILABLE} (a connection that failed or was reset, a replica
     * going away), {@code INTERNAL}, {@code UNKNOWN}, {@code DATA_LOSS}, as the replica itself
     * ended the call, not relayed from further down.
     */
    REPLICA_FAILURE,
    /** {@code RESOURCE_EXHAUSTED}: load shedding. */
    OVERLOAD,
    /** {@code CANCELLED}: the caller left. */
    CANCELLED,
    /** {@code DEADLINE_EXCEEDED}: the call's own deadline, which the caller's budget set. */
    DEADLINE,
    /** A replica failure that the replica passed on from its own downstream ({@link #relay}). */
    RELAYED;

    /** The trailer a hop sends on a failure it passes on from its downstream. */
    public static final Metadata.Key<String> RELAYED_KEY =
            Metadata.Key.of("grpcops-relayed", Metadata.ASCII_STRING_MARSHALLER);

    /** What {@code status} with {@code trailers} (null when none arrived) says. */
    public static CallOutcome of(Status status, @Nullable Metadata trailers) {
        return switch (status.getCode()) {
            case OK -> ANSWERED;
            case UNAVAILABLE, INTERNAL, UNKNOWN, DATA_LOSS ->
                trailers != null && trailers.containsKey(RELAYED_KEY) ? RELAYED : REPLICA_FAILURE;
            case RESOURCE_EXHAUSTED -> OVERLOAD;
            case CANCELLED -> CANCELLED;
            case DEADLINE_EXCEEDED -> DEADLINE;
            default -> APPLICATION_ERROR;
        };
    }

    /** What a failed call's exception (a {@code StatusRuntimeException} or any other) says. */
    public static CallOutcome of(Throwable failure) {
        return of(Status.fromThrowable(failure), Status.trailersFromThrowable(failure));
    }

    /** Counts against the replica: ejection and failure accrual look at nothing else. */
    public boolean replicaFailure() {
        return this == REPLICA_FAILURE;
    }

    /** The replica answered the request, well or with an application error: a hedged call is decided. */
    public boolean definitive() {
        return this == ANSWERED || this == APPLICATION_ERROR;
    }

    /**
     * The failure of a downstream call, to end one's own call with: the same code and description,
     * marked as relayed, so that callers do not count it against this replica. The downstream's
     * pushback stays where it was meant: it was about the downstream, not this hop.
     *
     * <p>The exception has no stack trace: it would show this hop's plumbing, not the failure, and
     * taking it costs more than the rest of a failed call, most of all under overload, when calls
     * fail by the thousand a second.
     */
    public static StatusRuntimeException relay(Throwable downstreamFailure) {
        Status status = Status.fromThrowable(downstreamFailure);
        Metadata trailers = new Metadata();
        trailers.put(RELAYED_KEY, "1");
        return new Relayed(Status.fromCode(status.getCode()).withDescription(status.getDescription()), trailers);
    }

    /** A relayed failure: its status and trailers are all it says. */
    private static final class Relayed extends StatusRuntimeException {

        private static final long serialVersionUID = 1L;

        Relayed(Status status, Metadata trailers) {
            super(status, trailers);
        }

        @Override
        public synchronized Throwable fillInStackTrace() {
            return this;
        }
    }
}
