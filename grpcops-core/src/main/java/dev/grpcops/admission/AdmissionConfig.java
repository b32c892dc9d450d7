package dev.grpcops.admission;

import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Objects;
import java.util.Set;
import org.jspecify.annotations.Nullable;

/**
 * The server-wide admission settings (design §9): {@link #builder()} starts from {@link #DEFAULTS}
 * and refuses, naming the setting, a configuration that cannot work.
 */
public final class AdmissionConfig {

    /**
     * 128 fixed seats; the levels {@code critical}, {@code default} and {@code sheddable} with 50,
     * 35 and 15 shares and {@link PriorityLevelConfig#of}'s queues; a queue wait of at most 1 s;
     * pushback from 1 s up to 32 s; each queue earliest deadline first.
     */
    public static final AdmissionConfig DEFAULTS = builder().build();

    private final int limit;
    private final List<PriorityLevelConfig> levels;
    private final Duration maxWait;
    private final Duration retryPushback;
    private final Duration maxRetryPushback;
    private final QueueOrder queueOrder;
    private final @Nullable AdaptiveLimit adaptiveLimit;

    private AdmissionConfig(Builder builder) {
        this.limit = builder.limit;
        this.levels = List.copyOf(builder.levels);
        this.maxWait = builder.maxWait;
        this.retryPushback = builder.retryPushback;
        this.maxRetryPushback = builder.maxRetryPushback;
        this.queueOrder = builder.queueOrder;
        this.adaptiveLimit = builder.adaptiveLimit;
        if (limit < 1) {
            throw new InvalidAdmissionConfigException("limit", "must be at least 1 seat, got " + limit);
        }
        if (levels.isEmpty()) {
            throw new InvalidAdmissionConfigException("levels", "must define at least one priority level");
        }
        Set<String> names = new HashSet<>();
        for (PriorityLevelConfig level : levels) {
            if (!names.add(level.name())) {
                throw new InvalidAdmissionConfigException("levels." + level.name(), "is defined twice");
            }
        }
        if (levels.size() > limit) {
            throw new InvalidAdmissionConfigException(
                    "limit",
                    "must give each of the " + levels.size() + " priority levels at least one seat, got " + limit);
        }
        requirePositive(maxWait, "max-wait");
        requirePositive(retryPushback, "retry-pushback");
        requirePositive(maxRetryPushback, "max-retry-pushback");
        if (maxRetryPushback.compareTo(retryPushback) < 0) {
            throw new InvalidAdmissionConfigException(
                    "max-retry-pushback",
                    "must not be below retry-pushback (" + retryPushback + "), got " + maxRetryPushback);
        }
        if (queueOrder == null) {
            throw new InvalidAdmissionConfigException("queue-order", "must be deadline or arrival, got none");
        }
        if (adaptiveLimit != null) {
            if (adaptiveLimit.minLimit() < levels.size()) {
                throw new InvalidAdmissionConfigException(
                        "adaptive.min-limit",
                        "must give each of the " + levels.size() + " priority levels at least one seat, got "
                                + adaptiveLimit.minLimit());
            }
            if (limit < adaptiveLimit.minLimit() || limit > adaptiveLimit.maxLimit()) {
                throw new InvalidAdmissionConfigException(
                        "limit",
                        "is where the adaptive limit starts: it must lie within adaptive.min-limit ("
                                + adaptiveLimit.minLimit() + ") and adaptive.max-limit (" + adaptiveLimit.maxLimit()
                                + "), got " + limit);
            }
        }
    }

    /** Seats: calls the server executes at once, shared by the levels; where an adaptive limit starts. */
    public int limit() {
        return limit;
    }

    /** The priority levels, sharing the seats by their shares. */
    public List<PriorityLevelConfig> levels() {
        return levels;
    }

    /** The longest a call waits in a queue, also when its deadline would allow more. */
    public Duration maxWait() {
        return maxWait;
    }

    /** The first {@code grpc-retry-pushback-ms} a rejected caller is told. */
    public Duration retryPushback() {
        return retryPushback;
    }

    /** The most the pushback grows to while rejections go on (it doubles every second they do). */
    public Duration maxRetryPushback() {
        return maxRetryPushback;
    }

    /** The order in which each fair queue's waiting calls are served. */
    public QueueOrder queueOrder() {
        return queueOrder;
    }

    /** How the seats follow measured latency; null: the seats stay {@link #limit()}. */
    public @Nullable AdaptiveLimit adaptiveLimit() {
        return adaptiveLimit;
    }

    /** Checks that every level {@code policy} sends calls to is defined here. */
    public void check(CallerPolicy policy) {
        Set<String> defined = new HashSet<>();
        levels.forEach(level -> defined.add(level.name()));
        policy.referencedLevels().forEach((field, level) -> {
            if (!defined.contains(level)) {
                throw new InvalidAdmissionConfigException(
                        field, "names priority level '" + level + "', which is not defined (defined: " + defined + ")");
            }
        });
    }

    private static void requirePositive(Duration duration, String field) {
        if (duration == null || duration.isNegative() || duration.isZero()) {
            throw new InvalidAdmissionConfigException(field, "must be positive, got " + duration);
        }
    }

    /** Starts from {@link #DEFAULTS}. */
    public static Builder builder() {
        return new Builder();
    }

    /** These settings, to change some: {@code config.toBuilder().limit(64).build()}. */
    public Builder toBuilder() {
        return builder()
                .limit(limit)
                .levels(levels)
                .maxWait(maxWait)
                .retryPushback(retryPushback, maxRetryPushback)
                .queueOrder(queueOrder)
                .adaptiveLimit(adaptiveLimit);
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof AdmissionConfig other
                && limit == other.limit
                && levels.equals(other.levels)
                && maxWait.equals(other.maxWait)
                && retryPushback.equals(other.retryPushback)
                && maxRetryPushback.equals(other.maxRetryPushback)
                && queueOrder == other.queueOrder
                && Objects.equals(adaptiveLimit, other.adaptiveLimit);
    }

    @Override
    public int hashCode() {
        return Objects.hash(limit, levels, maxWait, retryPushback, maxRetryPushback, queueOrder, adaptiveLimit);
    }

    @Override
    public String toString() {
        return "AdmissionConfig[limit=" + limit + ", levels=" + levels + ", maxWait=" + maxWait + ", retryPushback="
                + retryPushback + ", maxRetryPushback=" + maxRetryPushback + ", queueOrder=" + queueOrder
                + ", adaptiveLimit=" + adaptiveLimit + "]";
    }

    /** Every value starts at {@link #DEFAULTS}'; the seats are fixed unless {@link #adaptiveLimit} is set. */
    public static final class Builder {

        private int limit = 128;
        private List<PriorityLevelConfig> levels = List.of(
                PriorityLevelConfig.of(Criticality.CRITICAL.value(), 50),
                PriorityLevelConfig.of(Criticality.DEFAULT.value(), 35),
                PriorityLevelConfig.of(Criticality.SHEDDABLE.value(), 15));
        private Duration maxWait = Duration.ofSeconds(1);
        private Duration retryPushback = Duration.ofSeconds(1);
        private Duration maxRetryPushback = Duration.ofSeconds(32);
        private QueueOrder queueOrder = QueueOrder.DEADLINE;
        private @Nullable AdaptiveLimit adaptiveLimit;

        private Builder() {}

        /** Calls the server executes at once, shared by the levels (with an adaptive limit, where it starts); 128 by default. */
        public Builder limit(int limit) {
            this.limit = limit;
            return this;
        }

        /** The priority levels, in place of the default ones. */
        public Builder levels(List<PriorityLevelConfig> levels) {
            this.levels = new ArrayList<>(Objects.requireNonNull(levels, "levels"));
            return this;
        }

        /** As {@link #levels(List)}. */
        public Builder levels(PriorityLevelConfig... levels) {
            return levels(List.of(levels));
        }

        /** The longest a call waits in a queue, also when its deadline would allow more; 1 s by default. */
        public Builder maxWait(Duration maxWait) {
            this.maxWait = maxWait;
            return this;
        }

        /** The first pushback a rejected caller is told, and the most it grows to; 1 s and 32 s by default. */
        public Builder retryPushback(Duration first, Duration max) {
            this.retryPushback = first;
            this.maxRetryPushback = max;
            return this;
        }

        /** The order in which each fair queue's waiting calls are served; earliest deadline first by default. */
        public Builder queueOrder(QueueOrder queueOrder) {
            this.queueOrder = queueOrder;
            return this;
        }

        /**
         * Sizes the seats from measured latency within the limit's bounds, starting at {@link #limit};
         * null (the default) keeps them fixed.
         */
        public Builder adaptiveLimit(@Nullable AdaptiveLimit adaptiveLimit) {
            this.adaptiveLimit = adaptiveLimit;
            return this;
        }

        /** @throws InvalidAdmissionConfigException naming the field that is out of range */
        public AdmissionConfig build() {
            return new AdmissionConfig(this);
        }
    }
}
