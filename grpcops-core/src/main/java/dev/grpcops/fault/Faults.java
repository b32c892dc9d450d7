package dev.grpcops.fault;

import java.time.Duration;
import java.util.Locale;

/**
 * What a replica injects: an extra delay before every answer, a periodic stall (answers held for
 * {@code stall} at the start of every {@code stallEvery}), and a share of calls failed at once with
 * {@code UNAVAILABLE}. {@link #NONE} injects nothing.
 *
 * @param delay extra delay before every answer, 0 to 60 s
 * @param stall how long answers are held at the start of each period, 0 to 60 s; needs {@code stallEvery}
 * @param stallEvery the period of the stalls, above {@code stall}, at most 1 h; zero when there are none
 * @param errorRatio share of calls failed at once with UNAVAILABLE, 0 to 1
 */
public record Faults(Duration delay, Duration stall, Duration stallEvery, double errorRatio) {

    private static final Duration MAX_HOLD = Duration.ofSeconds(60);
    private static final Duration MAX_PERIOD = Duration.ofHours(1);

    /** Nothing injected. */
    public static final Faults NONE = new Faults(Duration.ZERO, Duration.ZERO, Duration.ZERO, 0);

    public Faults {
        requireBetween("delay", delay, MAX_HOLD);
        requireBetween("stall", stall, MAX_HOLD);
        requireBetween("stall-every", stallEvery, MAX_PERIOD);
        if (!stall.isZero() && stallEvery.compareTo(stall) <= 0) {
            throw new InvalidFaultException(
                    "stall-every",
                    "must be longer than stall (" + stall.toMillis() + " ms), got " + stallEvery.toMillis() + " ms");
        }
        if (!(errorRatio >= 0 && errorRatio <= 1)) {
            throw new InvalidFaultException("error-ratio", "must be 0-1, got " + errorRatio);
        }
    }

    /** Whether anything is injected. */
    public boolean any() {
        return !delay.isZero() || !stall.isZero() || errorRatio > 0;
    }

    /** How operators write it: {@code delay 200ms, stall 200ms/1000ms, error-ratio 0.5}, or {@code none}. */
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
        if (errorRatio > 0) {
            text.append(text.isEmpty() ? "" : ", ").append(String.format(Locale.ROOT, "error-ratio %s", errorRatio));
        }
        return text.toString();
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
