package dev.grpcops.fault;

import io.grpc.Status;
import java.time.Duration;
import java.util.Locale;
import java.util.Objects;
import java.util.Set;

/**
 * What a replica injects: an extra delay before every answer, a periodic stall (answers held for
 * {@link #stall()} at the start of every {@link #stallEvery()}), CPU work before every call (its
 * capacity falls: the delay and the stall only hold answers, and cost the replica nothing), and a
 * share of calls failed at once
 * with {@link #errorCode()} ({@code UNAVAILABLE} unless told otherwise: a replica down; {@code INTERNAL},
 * {@code UNKNOWN} or {@code DATA_LOSS}: a broken one; {@code RESOURCE_EXHAUSTED}: one shedding load).
 * {@link #NONE} injects nothing.
 *
 * <pre>{@code
 * Faults slow = Faults.builder().delay(Duration.ofMillis(200)).build();
 * Faults broken = Faults.builder().errorRatio(0.5).errorCode(Status.Code.INTERNAL).build();
 * Faults busy = Faults.builder().work(Duration.ofMillis(2)).build();
 * }</pre>
 */
public final class Faults {

    private static final Duration MAX_HOLD = Duration.ofSeconds(60);
    private static final Duration MAX_PERIOD = Duration.ofHours(1);
    private static final Duration MAX_WORK = Duration.ofSeconds(1);

    /** The codes an injected error may have: a replica failing, or shedding. */
    public static final Set<Status.Code> ERROR_CODES = Set.of(
            Status.Code.UNAVAILABLE,
            Status.Code.INTERNAL,
            Status.Code.UNKNOWN,
            Status.Code.DATA_LOSS,
            Status.Code.RESOURCE_EXHAUSTED);

    /** Nothing injected. */
    public static final Faults NONE = builder().build();

    private final Duration delay;
    private final Duration stall;
    private final Duration stallEvery;
    private final double errorRatio;
    private final Status.Code errorCode;
    private final Duration work;

    private Faults(Builder builder) {
        this.delay = builder.delay;
        this.stall = builder.stall;
        this.stallEvery = builder.stallEvery;
        this.errorRatio = builder.errorRatio;
        this.errorCode = builder.errorCode;
        this.work = builder.work;
    }

    /** Nothing injected, to add what you need. */
    public static Builder builder() {
        return new Builder();
    }

    /** Extra delay before every answer. */
    public Duration delay() {
        return delay;
    }

    /** How long answers are held at the start of each period. */
    public Duration stall() {
        return stall;
    }

    /** The period of the stalls; zero when there are none. */
    public Duration stallEvery() {
        return stallEvery;
    }

    /** Share of calls failed at once, 0 to 1. */
    public double errorRatio() {
        return errorRatio;
    }

    /** The code the failed calls end with. */
    public Status.Code errorCode() {
        return errorCode;
    }

    /** CPU work the call's thread does before each call's handler runs; zero for none. */
    public Duration work() {
        return work;
    }

    /** Whether anything is injected. */
    public boolean any() {
        return !delay.isZero() || !stall.isZero() || errorRatio > 0 || !work.isZero();
    }

    @Override
    public boolean equals(Object other) {
        return other instanceof Faults that
                && delay.equals(that.delay)
                && stall.equals(that.stall)
                && stallEvery.equals(that.stallEvery)
                && errorRatio == that.errorRatio
                && errorCode == that.errorCode
                && work.equals(that.work);
    }

    @Override
    public int hashCode() {
        return Objects.hash(delay, stall, stallEvery, errorRatio, errorCode, work);
    }

    /**
     * How operators write it: {@code delay 200ms, stall 200ms/1000ms, work 2ms, error-ratio 0.5 INTERNAL},
     * or {@code none}.
     */
    @Override
    public String toString() {
        if (!any()) {
            return "none";
        }
        StringBuilder text = new StringBuilder();
        if (!delay.isZero()) {
            text.append("delay ").append(delay.toMillis()).append("ms");
        }
        if (!stall.isZero()) {
            text.append(text.isEmpty() ? "" : ", ")
                    .append("stall ")
                    .append(stall.toMillis())
                    .append("ms/")
                    .append(stallEvery.toMillis())
                    .append("ms");
        }
        if (!work.isZero()) {
            text.append(text.isEmpty() ? "" : ", ")
                    .append("work ")
                    .append(work.toMillis())
                    .append("ms");
        }
        if (errorRatio > 0) {
            text.append(text.isEmpty() ? "" : ", ").append(String.format(Locale.ROOT, "error-ratio %s", errorRatio));
            if (errorCode != Status.Code.UNAVAILABLE) {
                text.append(' ').append(errorCode);
            }
        }
        return text.toString();
    }

    /** These faults, to change some: {@code faults.toBuilder().errorRatio(0.1).build()}. */
    public Builder toBuilder() {
        return builder()
                .delay(delay)
                .stall(stall, stallEvery)
                .errorRatio(errorRatio)
                .errorCode(errorCode)
                .work(work);
    }

    /** A replica's faults, none until set; {@link #build()} checks each value and names the one that is wrong. */
    public static final class Builder {

        private Duration delay = Duration.ZERO;
        private Duration stall = Duration.ZERO;
        private Duration stallEvery = Duration.ZERO;
        private double errorRatio;
        private Status.Code errorCode = Status.Code.UNAVAILABLE;
        private Duration work = Duration.ZERO;

        private Builder() {}

        /** Extra delay before every answer, 0 to 60 s. */
        public Builder delay(Duration delay) {
            this.delay = delay;
            return this;
        }

        /** Answers held for {@code stall} (0 to 60 s) at the start of every {@code every} (above {@code stall}, at most 1 h). */
        public Builder stall(Duration stall, Duration every) {
            this.stall = stall;
            this.stallEvery = every;
            return this;
        }

        /** Share of calls failed at once, 0 to 1. */
        public Builder errorRatio(double errorRatio) {
            this.errorRatio = errorRatio;
            return this;
        }

        /**
         * CPU work before each call's handler runs, 0 to 1 s in whole milliseconds, on the call's thread: the replica
         * serves fewer calls per second per core, as if each cost that much more to serve.
         */
        public Builder work(Duration work) {
            this.work = work;
            return this;
        }

        /** What the failed calls end with: one of {@link #ERROR_CODES}; {@code UNAVAILABLE} by default. */
        public Builder errorCode(Status.Code errorCode) {
            this.errorCode = errorCode;
            return this;
        }

        /** @throws InvalidFaultException naming the setting a value breaks */
        public Faults build() {
            requireBetween("delay", delay, MAX_HOLD);
            requireBetween("stall", stall, MAX_HOLD);
            requireBetween("stall-every", stallEvery, MAX_PERIOD);
            requireBetween("work", work, MAX_WORK);
            if (work.toNanos() % 1_000_000 != 0) {
                // The contract, the CLI and the metrics' readers count it in milliseconds.
                throw new InvalidFaultException("work", "must be whole milliseconds, got " + work);
            }
            if (!stall.isZero() && stallEvery.compareTo(stall) <= 0) {
                throw new InvalidFaultException(
                        "stall-every",
                        "must be longer than stall (" + stall.toMillis() + " ms), got " + stallEvery.toMillis()
                                + " ms");
            }
            if (!(errorRatio >= 0 && errorRatio <= 1)) {
                throw new InvalidFaultException("error-ratio", "must be 0-1, got " + errorRatio);
            }
            if (errorCode == null || !ERROR_CODES.contains(errorCode)) {
                throw new InvalidFaultException(
                        "error-code",
                        "must be one of UNAVAILABLE, INTERNAL, UNKNOWN, DATA_LOSS, RESOURCE_EXHAUSTED, got "
                                + errorCode);
            }
            return new Faults(this);
        }

        private static void requireBetween(String field, Duration value, Duration max) {
            if (value == null) {
                throw new InvalidFaultException(field, "must be set");
            }
            if (value.isNegative() || value.compareTo(max) > 0) {
                throw new InvalidFaultException(
                        field, "must be 0-" + max.toMillis() + " ms, got " + value.toMillis() + " ms");
            }
        }
    }
}
