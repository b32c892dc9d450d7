package dev.grpcops.admission;

/**
 * One priority level (design §9, after APF's PriorityLevelConfiguration).
 *
 * @param name the level's name, the {@code priority_level} label of the metrics
 * @param shares nominal concurrency shares: the level's seats are {@code ceil(limit × shares / Σ shares)}
 * @param queues queues of the level's fair queuing; 0 rejects at once when no seat is free
 * @param handSize queues each flow draws by shuffle sharding; it joins the shortest of them
 * @param queueLengthLimit calls one queue may hold
 */
public record PriorityLevelConfig(String name, int shares, int queues, int handSize, int queueLengthLimit) {

    /** Queues of a level by default. */
    public static final int DEFAULT_QUEUES = 64;
    /** Hand size by default. */
    public static final int DEFAULT_HAND_SIZE = 8;
    /** Calls one queue holds by default. */
    public static final int DEFAULT_QUEUE_LENGTH_LIMIT = 50;

    /** Enough to tell flows apart without two flows often drawing the same hand (APF checks the same). */
    static final int MAX_ENTROPY_BITS = 60;

    public PriorityLevelConfig {
        if (name == null || name.isBlank()) {
            throw new IllegalArgumentException("a priority level needs a name");
        }
        require(shares >= 1, name, "shares", "must be at least 1, got " + shares);
        require(queues >= 0, name, "queues", "must not be negative, got " + queues);
        if (queues > 0) {
            require(
                    handSize >= 1 && handSize <= queues,
                    name,
                    "hand-size",
                    "must be between 1 and queues (" + queues + "), got " + handSize);
            require(
                    entropyBits(queues, handSize) <= MAX_ENTROPY_BITS,
                    name,
                    "hand-size",
                    "with " + queues + " queues needs more than " + MAX_ENTROPY_BITS
                            + " bits of hash: lower it or the queues");
            require(queueLengthLimit >= 1, name, "queue-length-limit", "must be at least 1, got " + queueLengthLimit);
        }
    }

    /** The level with its defaults from APF's {@code global-default}, scaled for a single service. */
    public static PriorityLevelConfig of(String name, int shares) {
        return new PriorityLevelConfig(name, shares, DEFAULT_QUEUES, DEFAULT_HAND_SIZE, DEFAULT_QUEUE_LENGTH_LIMIT);
    }

    private static double entropyBits(int queues, int handSize) {
        double bits = 0;
        for (int i = 0; i < handSize; i++) {
            bits += Math.log(queues - i) / Math.log(2);
        }
        return bits;
    }

    private static void require(boolean ok, String level, String field, String message) {
        if (!ok) {
            throw new InvalidAdmissionConfigException("levels." + level + "." + field, message);
        }
    }
}
