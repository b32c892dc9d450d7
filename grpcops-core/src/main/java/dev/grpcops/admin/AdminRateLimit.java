package dev.grpcops.admin;

import java.time.Duration;

/**
 * How refused admin calls are limited and logged, per caller address (IP, whatever the port).
 *
 * <p>A refused call is one the admin authorization ends: no or malformed credentials, a wrong
 * token, or admin operations disabled. Once {@code maxFailures} such calls from one address fall
 * within {@code window} (counted from the first of them), every further refused call from that
 * address ends with {@code RESOURCE_EXHAUSTED}, without saying what was wrong, until the window has
 * passed. A call with the right token always passes, and forgives the address's count: admins
 * behind a proxy are never locked out by someone else's wrong tokens. Refused calls are logged
 * at most once per {@code logInterval} per address, with their count.
 *
 * <p>At most {@code maxPeers} addresses are tracked (a few hundred bytes each, about 3 MB at 10 000); beyond that the one
 * least recently seen is forgotten. No thread is used: the bookkeeping happens on the calls.
 *
 * @param maxFailures refused calls within the window after which an address is refused unchecked
 * @param window how long refused calls count, and how long an address stays refused
 * @param maxPeers how many addresses are tracked at most
 * @param logInterval at most one WARN line per address per this interval
 */
public record AdminRateLimit(int maxFailures, Duration window, int maxPeers, Duration logInterval) {

    /** 5 refused calls per 10 s per address, 10 000 addresses, one log line per address per 10 s. */
    public static final AdminRateLimit DEFAULTS =
            new AdminRateLimit(5, Duration.ofSeconds(10), 10_000, Duration.ofSeconds(10));

    public AdminRateLimit {
        if (maxFailures < 1) {
            throw new IllegalArgumentException("maxFailures must be at least 1, got " + maxFailures);
        }
        requirePositive("window", window);
        if (maxPeers < 1) {
            throw new IllegalArgumentException("maxPeers must be at least 1, got " + maxPeers);
        }
        requirePositive("logInterval", logInterval);
    }

    private static void requirePositive(String name, Duration value) {
        if (value == null || value.isNegative() || value.isZero()) {
            throw new IllegalArgumentException(name + " must be positive, got " + value);
        }
    }
}
