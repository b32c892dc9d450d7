package dev.grpcops.spring.server;

/**
 * The environment variable {@code MAX_CONNECTION_AGE_MS} (milliseconds, as Kubernetes manifests set
 * it), read the same way by both starters: each turns it into its integration's max-connection-age
 * property, with a 5 s grace for calls in flight unless one is configured.
 */
public final class MaxConnectionAge {

    /** The variable's name. */
    public static final String VARIABLE = "MAX_CONNECTION_AGE_MS";

    /** The grace for calls in flight when the connection's age is up, unless one is configured. */
    public static final String GRACE = "5000ms";

    private MaxConnectionAge() {}

    /**
     * {@code value} as a positive number of milliseconds; a value that is not one fails naming the
     * variable.
     */
    public static long millis(String value) {
        long millis;
        try {
            millis = Long.parseLong(value.trim());
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException(
                    VARIABLE + " must be a whole number of milliseconds, got '" + value + "'");
        }
        if (millis <= 0) {
            throw new IllegalArgumentException(VARIABLE + " must be positive, got " + millis);
        }
        return millis;
    }
}
