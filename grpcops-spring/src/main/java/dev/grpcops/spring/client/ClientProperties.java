package dev.grpcops.spring.client;

import dev.grpcops.client.ServiceConfigs;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;
import org.springframework.boot.context.properties.ConfigurationProperties;

/** How outgoing channels balance, eject failing replicas and recover, under {@code grpcops.client}. */
@ConfigurationProperties("grpcops.client")
public class ClientProperties {

    /**
     * Channels (by net.devh client name) that skip addresses whose health, for the given service
     * name, is not SERVING (client-side health checking). Example:
     * grpcops.client.health-checked.stock=chain.v1.Stock
     */
    private Map<String, String> healthChecked = new LinkedHashMap<>();

    /**
     * How often a channel that cannot reach any address, or whose balancer has a replica it cannot
     * reach, retries at once instead of waiting out gRPC's growing reconnect backoff, so that a
     * backend that comes back (a restart, a healed partition) is used within about this long. Zero
     * or negative leaves gRPC's backoff alone.
     */
    private Duration reconnectInterval = Duration.ofMillis(500);

    /**
     * How long a connection attempt waits for the peer's answer before it fails and the next one is
     * tried (Netty's connect timeout): an address whose node is gone or cut off answers nothing, and
     * Netty's own default waits 30 s per attempt. On Linux the keepalive timeout bounds an attempt as
     * well (TCP_USER_TIMEOUT).
     */
    private Duration connectTimeout = Duration.ofSeconds(5);

    /**
     * Until a channel has first been READY, and for at most this long after it was made, its calls
     * wait for a replica within their own deadline instead of failing at once with UNAVAILABLE (a
     * service started together with its downstream); after that they fail fast. Zero or negative: never wait.
     */
    private Duration waitForReadyWindow = Duration.ofSeconds(5);

    /**
     * Cancellations each channel sends downstream a second (RST_STREAM frames), half of them at once
     * at most; past it, a cancellation waits and is sent as the budget refills (the caller is answered at
     * once), so that a caller cancelling fan-outs cannot make a downstream's rapid-reset guard close the
     * shared connection.
     * Keep it under the downstream's grpcops.server.max-rst-frames (2000 a second by default). Zero: no budget.
     */
    private int cancellationsPerSecond = 1000;

    public int getCancellationsPerSecond() {
        return cancellationsPerSecond;
    }

    public void setCancellationsPerSecond(int cancellationsPerSecond) {
        this.cancellationsPerSecond = cancellationsPerSecond;
    }

    public Duration getWaitForReadyWindow() {
        return waitForReadyWindow;
    }

    public void setWaitForReadyWindow(Duration waitForReadyWindow) {
        this.waitForReadyWindow = waitForReadyWindow;
    }

    /**
     * Run the callbacks of every channel's calls on the transport's own threads instead of an
     * executor (grpc-java's directExecutor). Only for code whose callbacks never block.
     */
    private boolean directExecutor;

    /** How every channel picks among the replicas its target resolves to. */
    private final Balancing balancing = new Balancing();

    /** Ejection of replicas that fail far more than their peers (gRFC A50's rules, replica failures only). */
    private final OutlierDetection outlierDetection = new OutlierDetection();

    public Balancing getBalancing() {
        return balancing;
    }

    public OutlierDetection getOutlierDetection() {
        return outlierDetection;
    }

    /** {@code grpcops.client.balancing.*}. */
    public static class Balancing {

        /**
         * peak-ewma: power of two choices over each replica's peak-EWMA latency x (calls outstanding + 1),
         * fast failures charged a penalty; round-robin: in turn. Both eject under outlier-detection.
         */
        private ServiceConfigs.Balancing policy = ServiceConfigs.Balancing.PEAK_EWMA;

        /** peak-ewma: how fast a replica's cost forgets a slow answer (its time constant). */
        private Duration decay = Duration.ofSeconds(10);

        /** peak-ewma: what a fast failure (UNAVAILABLE, RESOURCE_EXHAUSTED) counts as. */
        private Duration failurePenalty = Duration.ofSeconds(1);

        /**
         * peak-ewma: up to how many replicas in the pick every one is compared besides the two drawn,
         * the least loaded fast one taken when both drawn are more than twice as slow as the fastest (0: never).
         */
        private int compareAllUpTo = 8;

        /**
         * peak-ewma: over how long a replica that becomes ready (new, or back from a restart or a
         * health flap) ramps up from 10 % of an equal share of the picks to all of it, its first call
         * at once (0: at once).
         */
        private Duration slowStart = Duration.ofSeconds(10);

        public ServiceConfigs.Balancing getPolicy() {
            return policy;
        }

        public void setPolicy(ServiceConfigs.Balancing policy) {
            this.policy = policy;
        }

        public Duration getDecay() {
            return decay;
        }

        public void setDecay(Duration decay) {
            this.decay = decay;
        }

        public Duration getFailurePenalty() {
            return failurePenalty;
        }

        public void setFailurePenalty(Duration failurePenalty) {
            this.failurePenalty = failurePenalty;
        }

        public int getCompareAllUpTo() {
            return compareAllUpTo;
        }

        public void setCompareAllUpTo(int compareAllUpTo) {
            this.compareAllUpTo = compareAllUpTo;
        }

        public Duration getSlowStart() {
            return slowStart;
        }

        public void setSlowStart(Duration slowStart) {
            this.slowStart = slowStart;
        }
    }

    /** {@code grpcops.client.outlier-detection.*}. */
    public static class OutlierDetection {

        /** Whether replicas that fail far more than their peers are taken out of the pick for a while. */
        private boolean enabled = true;

        /** How often replicas are judged. */
        private Duration interval = Duration.ofSeconds(1);

        /** How long an ejected replica stays out the first time (longer each time again). */
        private Duration baseEjectionTime = Duration.ofSeconds(10);

        /** The longest a replica stays out. */
        private Duration maxEjectionTime = Duration.ofSeconds(60);

        /** No ejection once this percentage of the replicas is out; the share out may pass it by one, so 33 keeps it at most half. */
        private int maxEjectionPercent = 33;

        /**
         * A replica failing this percentage of its judged calls in an interval, or more, is ejected.
         * Judged are successes and replica failures (UNAVAILABLE, INTERNAL, UNKNOWN, DATA_LOSS); never
         * shedding, the caller's cancellations or deadlines, or failures relayed from further down.
         */
        private int failurePercentage = 30;

        /** Replicas with enough calls needed before any is judged. */
        private int minimumHosts = 2;

        /** Calls a replica needs in an interval to be judged. */
        private int requestVolume = 10;

        public dev.grpcops.client.OutlierDetection toConfig() {
            if (!enabled) {
                return null;
            }
            try {
                return dev.grpcops.client.OutlierDetection.builder()
                        .interval(interval)
                        .baseEjectionTime(baseEjectionTime)
                        .maxEjectionTime(maxEjectionTime)
                        .maxEjectionPercent(maxEjectionPercent)
                        .failurePercentage(failurePercentage)
                        .minimumHosts(minimumHosts)
                        .requestVolume(requestVolume)
                        .build();
            } catch (IllegalArgumentException e) {
                throw new IllegalArgumentException(
                        "grpcops.client." + e.getMessage().replace("outlier detection: ", "outlier-detection: "));
            }
        }

        public boolean isEnabled() {
            return enabled;
        }

        public void setEnabled(boolean enabled) {
            this.enabled = enabled;
        }

        public Duration getInterval() {
            return interval;
        }

        public void setInterval(Duration interval) {
            this.interval = interval;
        }

        public Duration getBaseEjectionTime() {
            return baseEjectionTime;
        }

        public void setBaseEjectionTime(Duration baseEjectionTime) {
            this.baseEjectionTime = baseEjectionTime;
        }

        public Duration getMaxEjectionTime() {
            return maxEjectionTime;
        }

        public void setMaxEjectionTime(Duration maxEjectionTime) {
            this.maxEjectionTime = maxEjectionTime;
        }

        public int getMaxEjectionPercent() {
            return maxEjectionPercent;
        }

        public void setMaxEjectionPercent(int maxEjectionPercent) {
            this.maxEjectionPercent = maxEjectionPercent;
        }

        public int getFailurePercentage() {
            return failurePercentage;
        }

        public void setFailurePercentage(int failurePercentage) {
            this.failurePercentage = failurePercentage;
        }

        public int getMinimumHosts() {
            return minimumHosts;
        }

        public void setMinimumHosts(int minimumHosts) {
            this.minimumHosts = minimumHosts;
        }

        public int getRequestVolume() {
            return requestVolume;
        }

        public void setRequestVolume(int requestVolume) {
            this.requestVolume = requestVolume;
        }
    }

    public boolean isDirectExecutor() {
        return directExecutor;
    }

    public void setDirectExecutor(boolean directExecutor) {
        this.directExecutor = directExecutor;
    }

    public Map<String, String> getHealthChecked() {
        return healthChecked;
    }

    public void setHealthChecked(Map<String, String> healthChecked) {
        this.healthChecked = healthChecked;
    }

    public Duration getReconnectInterval() {
        return reconnectInterval;
    }

    public Duration getConnectTimeout() {
        return connectTimeout;
    }

    public void setConnectTimeout(Duration connectTimeout) {
        if (connectTimeout == null
                || connectTimeout.isNegative()
                || connectTimeout.isZero()
                || connectTimeout.toMillis() > Integer.MAX_VALUE) {
            throw new IllegalArgumentException(
                    "grpcops.client.connect-timeout must be positive, got " + connectTimeout);
        }
        this.connectTimeout = connectTimeout;
    }

    public void setReconnectInterval(Duration reconnectInterval) {
        this.reconnectInterval = reconnectInterval;
    }
}
