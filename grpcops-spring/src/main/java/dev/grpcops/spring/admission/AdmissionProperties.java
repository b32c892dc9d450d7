package dev.grpcops.spring.admission;

import dev.grpcops.InfrastructureServices;
import dev.grpcops.admission.AdaptiveLimit;
import dev.grpcops.admission.AdmissionConfig;
import dev.grpcops.admission.CallerPolicy;
import dev.grpcops.admission.Criticality;
import dev.grpcops.admission.PriorityLevelConfig;
import dev.grpcops.admission.QueueOrder;
import java.time.Duration;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.springframework.boot.context.properties.ConfigurationProperties;

/**
 * Fair admission under overload (design §9), under {@code grpcops.admission}. A level you set
 * replaces the default one of that name; fields you leave out take APF's defaults.
 */
@ConfigurationProperties("grpcops.admission")
public class AdmissionProperties {

    static final String PREFIX = "grpcops.admission.";

    /** Whether calls are admitted through priority levels and fair queues; off, every call runs at once. */
    private boolean enabled = true;

    /**
     * Seats: calls the server runs at once, shared by the levels by their shares. Calls beyond it
     * wait in fair queues. The default keeps the chain at full throughput on 2 cores and its
     * latency under a flood far below a 1 s deadline (docs/overload.md, "Who gets rejected under overload").
     * Fewer seats cost throughput at saturation: with 128 at Edge, its callers' connections carried
     * a third more packets per Checkout than with 512 (fewer calls running at once batch less), and
     * the chain made about a tenth fewer Checkouts (docs/benchmarks.md).
     */
    private int limit = 128;

    /** Longest a call waits in a queue, also when its deadline would allow more. */
    private Duration maxWait = Duration.ofSeconds(1);

    /**
     * The order in which each fair queue's waiting calls are served: deadline (the least budget left
     * first, and a call whose remaining budget no longer covers the level's service time when its
     * turn comes is answered DEADLINE_EXCEEDED, reason cannot-finish) or arrival (first come, first served).
     */
    private QueueOrder queueOrder = QueueOrder.DEADLINE;

    /**
     * Whether this service calls others while serving: then a call is admitted to a queue only if
     * its budget still covers the predicted wait plus grpcops.budget.reserve and min-downstream.
     */
    private boolean callsDownstream;

    /** The first grpc-retry-pushback-ms a rejected caller is told; it doubles every second rejections go on. */
    private Duration retryPushback = Duration.ofSeconds(1);

    /** The most retry-pushback grows to. */
    private Duration maxRetryPushback = Duration.ofSeconds(32);

    /** Seats that follow measured latency, within bounds; off by default (the seats stay at limit). */
    private final Adaptive adaptive = new Adaptive();

    /** Priority levels by name. */
    private Map<String, Level> levels = defaultLevels();

    /** The level each criticality (critical, default, sheddable) goes to. */
    private Map<String, String> criticalityLevels = defaultCriticalityLevels();

    /** Rules for chosen callers (x-grpcops-caller, or the peer's IP address when a call names none). */
    private Map<String, CallerRule> callers = new LinkedHashMap<>();

    /** The highest criticality a caller without its own rule may claim. */
    private Criticality defaultMaxCriticality = Criticality.CRITICAL;

    /** Services that are never queued or rejected (health, reflection); admin methods are exempt too. */
    private List<String> exemptServices = new ArrayList<>(InfrastructureServices.NAMES);

    /** One priority level. */
    public static class Level {

        /** Nominal concurrency shares: the level's seats are ceil(limit x shares / sum of shares). */
        private int shares = 30;

        /** Queues of the level's fair queuing; 0 rejects at once when no seat is free. */
        private int queues = 64;

        /** Queues each flow is dealt by shuffle sharding; it joins the shortest of them. */
        private int handSize = 8;

        /** Calls one queue may hold. */
        private int queueLengthLimit = 50;

        public Level() {}

        Level(int shares) {
            this.shares = shares;
        }

        public int getShares() {
            return shares;
        }

        public void setShares(int shares) {
            this.shares = shares;
        }

        public int getQueues() {
            return queues;
        }

        public void setQueues(int queues) {
            this.queues = queues;
        }

        public int getHandSize() {
            return handSize;
        }

        public void setHandSize(int handSize) {
            this.handSize = handSize;
        }

        public int getQueueLengthLimit() {
            return queueLengthLimit;
        }

        public void setQueueLengthLimit(int queueLengthLimit) {
            this.queueLengthLimit = queueLengthLimit;
        }
    }

    /** Seats sized from measured latency (gradient of a long-term baseline against each window's latency). */
    public static class Adaptive {

        /** Whether the seats follow measured latency, starting at limit; off, they stay at limit. */
        private boolean enabled;

        /** The fewest seats the limit falls to; at least one per priority level. */
        private int minLimit = 8;

        /** The most seats the limit grows to. */
        private int maxLimit = 512;

        /** How often the limit may change; a window with fewer than 10 answered calls changes nothing. */
        private Duration window = Duration.ofSeconds(1);

        /** How far above the baseline a window's mean latency may be before the limit falls (1.5: 50 %). */
        private double tolerance = 1.5;

        public boolean isEnabled() {
            return enabled;
        }

        public void setEnabled(boolean enabled) {
            this.enabled = enabled;
        }

        public int getMinLimit() {
            return minLimit;
        }

        public void setMinLimit(int minLimit) {
            this.minLimit = minLimit;
        }

        public int getMaxLimit() {
            return maxLimit;
        }

        public void setMaxLimit(int maxLimit) {
            this.maxLimit = maxLimit;
        }

        public Duration getWindow() {
            return window;
        }

        public void setWindow(Duration window) {
            this.window = window;
        }

        public double getTolerance() {
            return tolerance;
        }

        public void setTolerance(double tolerance) {
            this.tolerance = tolerance;
        }

        public AdaptiveLimit toLimit() {
            return AdaptiveLimit.builder()
                    .minLimit(minLimit)
                    .maxLimit(maxLimit)
                    .window(window)
                    .tolerance(tolerance)
                    .build();
        }
    }

    /** What an operator decides for one caller. */
    public static class CallerRule {

        /** The level the caller's calls go to, whatever criticality they claim; unset: by criticality. */
        private String level;

        /** The highest criticality the caller may claim; it may always claim less. */
        private Criticality maxCriticality;

        public String getLevel() {
            return level;
        }

        public void setLevel(String level) {
            this.level = level;
        }

        public Criticality getMaxCriticality() {
            return maxCriticality;
        }

        public void setMaxCriticality(Criticality maxCriticality) {
            this.maxCriticality = maxCriticality;
        }
    }

    private static Map<String, Level> defaultLevels() {
        Map<String, Level> levels = new LinkedHashMap<>();
        levels.put("critical", new Level(50));
        levels.put("default", new Level(35));
        levels.put("sheddable", new Level(15));
        return levels;
    }

    private static Map<String, String> defaultCriticalityLevels() {
        Map<String, String> levels = new LinkedHashMap<>();
        for (Criticality criticality : Criticality.values()) {
            levels.put(criticality.value(), criticality.value());
        }
        return levels;
    }

    /** The core's configuration; throws {@link dev.grpcops.admission.InvalidAdmissionConfigException} naming the field. */
    public AdmissionConfig toConfig() {
        List<PriorityLevelConfig> configs = new ArrayList<>();
        levels.forEach((name, level) -> configs.add(PriorityLevelConfig.builder(name)
                .shares(level.shares)
                .queues(level.queues)
                .handSize(level.handSize)
                .queueLengthLimit(level.queueLengthLimit)
                .build()));
        return AdmissionConfig.builder()
                .limit(limit)
                .levels(configs)
                .maxWait(maxWait)
                .retryPushback(retryPushback, maxRetryPushback)
                .queueOrder(queueOrder)
                .adaptiveLimit(adaptive.enabled ? adaptive.toLimit() : null)
                .build();
    }

    public CallerPolicy toPolicy() {
        Map<Criticality, String> byCriticality = new EnumMap<>(Criticality.class);
        criticalityLevels.forEach((key, level) -> {
            Criticality criticality = Criticality.parse(key);
            if (!criticality.value().equalsIgnoreCase(key.trim())) {
                throw new dev.grpcops.admission.InvalidAdmissionConfigException(
                        "criticality-levels." + key, "is not a criticality (critical, default, sheddable)");
            }
            byCriticality.put(criticality, level);
        });
        CallerPolicy.Builder policy =
                CallerPolicy.builder().criticalityLevels(byCriticality).defaultCap(defaultMaxCriticality);
        callers.forEach((caller, rule) -> {
            if (rule.level != null) {
                policy.callerLevel(caller, rule.level);
            }
            if (rule.maxCriticality != null) {
                policy.callerCap(caller, rule.maxCriticality);
            }
        });
        return policy.build();
    }

    public boolean isEnabled() {
        return enabled;
    }

    public void setEnabled(boolean enabled) {
        this.enabled = enabled;
    }

    public int getLimit() {
        return limit;
    }

    public void setLimit(int limit) {
        this.limit = limit;
    }

    public Duration getMaxWait() {
        return maxWait;
    }

    public void setMaxWait(Duration maxWait) {
        this.maxWait = maxWait;
    }

    public QueueOrder getQueueOrder() {
        return queueOrder;
    }

    public void setQueueOrder(QueueOrder queueOrder) {
        this.queueOrder = queueOrder;
    }

    public boolean isCallsDownstream() {
        return callsDownstream;
    }

    public void setCallsDownstream(boolean callsDownstream) {
        this.callsDownstream = callsDownstream;
    }

    public Duration getRetryPushback() {
        return retryPushback;
    }

    public void setRetryPushback(Duration retryPushback) {
        this.retryPushback = retryPushback;
    }

    public Duration getMaxRetryPushback() {
        return maxRetryPushback;
    }

    public void setMaxRetryPushback(Duration maxRetryPushback) {
        this.maxRetryPushback = maxRetryPushback;
    }

    public Adaptive getAdaptive() {
        return adaptive;
    }

    public Map<String, Level> getLevels() {
        return levels;
    }

    public void setLevels(Map<String, Level> levels) {
        this.levels = levels;
    }

    public Map<String, String> getCriticalityLevels() {
        return criticalityLevels;
    }

    public void setCriticalityLevels(Map<String, String> criticalityLevels) {
        this.criticalityLevels = criticalityLevels;
    }

    public Map<String, CallerRule> getCallers() {
        return callers;
    }

    public void setCallers(Map<String, CallerRule> callers) {
        this.callers = callers;
    }

    public Criticality getDefaultMaxCriticality() {
        return defaultMaxCriticality;
    }

    public void setDefaultMaxCriticality(Criticality defaultMaxCriticality) {
        this.defaultMaxCriticality = defaultMaxCriticality;
    }

    public List<String> getExemptServices() {
        return exemptServices;
    }

    public void setExemptServices(List<String> exemptServices) {
        this.exemptServices = exemptServices;
    }
}
