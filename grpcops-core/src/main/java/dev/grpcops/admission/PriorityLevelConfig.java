package dev.grpcops.admission;

import java.util.Objects;

/**
 * One priority level (design §9, after APF's PriorityLevelConfiguration):
 * {@link #builder(String)}, or {@link #of(String, int)} for a level with the default queues.
 */
public final class PriorityLevelConfig {

    /** Enough to tell flows apart without two flows often drawing the same hand (APF checks the same). */
    static final int MAX_ENTROPY_BITS = 60;

    private final String name;
    private final int shares;
    private final int queues;
    private final int handSize;
    private final int queueLengthLimit;

    private PriorityLevelConfig(Builder builder) {
        this.name = builder.name;
        this.shares = builder.shares;
        this.queues = builder.queues;
        this.handSize = builder.handSize;
        this.queueLengthLimit = builder.queueLengthLimit;
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

    /** A level called {@code name}: one share, 64 queues, hands of 8, 50 calls per queue, until set. */
    public static Builder builder(String name) {
        return new Builder(name);
    }

    /** The level with its defaults from APF's {@code global-default}, scaled for a single service. */
    public static PriorityLevelConfig of(String name, int shares) {
        return builder(name).shares(shares).build();
    }

    /** The level's name, the {@code priority_level} label of the metrics. */
    public String name() {
        return name;
    }

    /** Nominal concurrency shares: the level's seats are {@code ceil(limit × shares / Σ shares)}. */
    public int shares() {
        return shares;
    }

    /** Queues of the level's fair queuing; 0 rejects at once when no seat is free. */
    public int queues() {
        return queues;
    }

    /** Queues each flow draws by shuffle sharding; it joins the shortest of them. */
    public int handSize() {
        return handSize;
    }

    /** Calls one queue may hold. */
    public int queueLengthLimit() {
        return queueLengthLimit;
    }

    @Override
    public boolean equals(Object other) {
        return other instanceof PriorityLevelConfig level
                && name.equals(level.name)
                && shares == level.shares
                && queues == level.queues
                && handSize == level.handSize
                && queueLengthLimit == level.queueLengthLimit;
    }

    @Override
    public int hashCode() {
        return Objects.hash(name, shares, queues, handSize, queueLengthLimit);
    }

    @Override
    public String toString() {
        return "PriorityLevelConfig[name=" + name + ", shares=" + shares + ", queues=" + queues + ", handSize="
                + handSize + ", queueLengthLimit=" + queueLengthLimit + "]";
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

    /** This level's values, to change some: {@code level.toBuilder().queues(0).build()}. */
    public Builder toBuilder() {
        return builder(name).shares(shares).queues(queues).handSize(handSize).queueLengthLimit(queueLengthLimit);
    }

    /** A level's values, each at its default until set; {@link #build()} checks them. */
    public static final class Builder {

        private final String name;
        private int shares = 1;
        private int queues = 64;
        private int handSize = 8;
        private int queueLengthLimit = 50;

        private Builder(String name) {
            if (name == null || name.isBlank()) {
                throw new IllegalArgumentException("a priority level needs a name");
            }
            this.name = name;
        }

        /** Nominal concurrency shares, at least 1; 1 by default. */
        public Builder shares(int shares) {
            this.shares = shares;
            return this;
        }

        /** Queues of the level's fair queuing; 0 rejects at once when no seat is free; 64 by default. */
        public Builder queues(int queues) {
            this.queues = queues;
            return this;
        }

        /** Queues each flow draws, 1 to {@code queues}; 8 by default. */
        public Builder handSize(int handSize) {
            this.handSize = handSize;
            return this;
        }

        /** Calls one queue may hold, at least 1; 50 by default. */
        public Builder queueLengthLimit(int queueLengthLimit) {
            this.queueLengthLimit = queueLengthLimit;
            return this;
        }

        /** @throws InvalidAdmissionConfigException naming the field ({@code levels.<name>.<field>}) that is out of range */
        public PriorityLevelConfig build() {
            return new PriorityLevelConfig(this);
        }
    }
}
