package dev.grpcops.spring.server;

import java.time.Duration;
import org.springframework.boot.context.properties.ConfigurationProperties;

/**
 * Per-connection limits of the gRPC server and how it answers bad requests, under
 * {@code grpcops.server}. net.devh's own limits stay where they are: {@code grpc.server.max-inbound-message-size}
 * (4 MB), {@code grpc.server.max-inbound-metadata-size} (8 KB), keepalive enforcement
 * ({@code grpc.server.permit-keep-alive-time}, {@code grpc.server.permit-keep-alive-without-calls}: 5 s
 * and true with this starter, so that its clients' keepalive is permitted, see {@code KeepAliveEnvironment}).
 */
@ConfigurationProperties("grpcops.server")
public class ServerLimitsProperties {

    /**
     * Most calls one client connection may have open at once (HTTP/2 MAX_CONCURRENT_STREAMS); a
     * client asks for more only as earlier ones finish. Bounds the memory one connection can hold.
     */
    private int maxConcurrentCallsPerConnection = 1000;

    /**
     * Most RST_STREAM frames a client may send on one connection within rst-frames-window before
     * the server closes it (GOAWAY ENHANCE_YOUR_CALM): the HTTP/2 rapid-reset attack, CVE-2023-44487,
     * sends tens of thousands a second. Keep it above twice max-concurrent-calls-per-connection: a
     * client that cancels every call it has open, then as many again, is not attacking.
     */
    private int maxRstFrames = 2000;

    /** The window max-rst-frames counts over, in whole seconds. */
    private Duration rstFramesWindow = Duration.ofSeconds(1);

    /**
     * Run handlers on the transport's own threads instead of handing every call to an executor
     * (grpc-java's directExecutor). Only for services whose handlers and interceptors never block:
     * a blocked transport thread stalls every connection it serves. The grpcops services never block.
     */
    private boolean directExecutor;

    /**
     * Threads of the bounded executor handlers run on when direct-executor is off: a burst of
     * thousands of calls waits for one of them instead of becoming thousands of threads. Idle
     * threads end after a minute.
     */
    private int executorThreads = Math.max(4, 2 * Runtime.getRuntime().availableProcessors());

    /**
     * Most callbacks that may wait for the executor's threads when direct-executor is off; beyond
     * it a callback runs on the transport's thread, which holds back that thread's reads until the
     * executor catches up (nothing is dropped). Admission bounds the calls being served long before
     * this, but not the exempt ones.
     */
    private int executorQueue = 10_000;

    /** Undecodable requests and calls to unknown methods are logged at most once per this interval, with a count. */
    private Duration badRequestLogInterval = Duration.ofSeconds(10);

    public int getMaxConcurrentCallsPerConnection() {
        return maxConcurrentCallsPerConnection;
    }

    public void setMaxConcurrentCallsPerConnection(int maxConcurrentCallsPerConnection) {
        if (maxConcurrentCallsPerConnection < 1) {
            throw new IllegalArgumentException(
                    "grpcops.server.max-concurrent-calls-per-connection must be at least 1, got "
                            + maxConcurrentCallsPerConnection);
        }
        this.maxConcurrentCallsPerConnection = maxConcurrentCallsPerConnection;
    }

    public int getMaxRstFrames() {
        return maxRstFrames;
    }

    public void setMaxRstFrames(int maxRstFrames) {
        if (maxRstFrames < 1) {
            throw new IllegalArgumentException("grpcops.server.max-rst-frames must be at least 1, got " + maxRstFrames);
        }
        this.maxRstFrames = maxRstFrames;
    }

    public Duration getRstFramesWindow() {
        return rstFramesWindow;
    }

    public void setRstFramesWindow(Duration rstFramesWindow) {
        if (rstFramesWindow == null || rstFramesWindow.toSeconds() < 1 || rstFramesWindow.toMillis() % 1000 != 0) {
            throw new IllegalArgumentException("grpcops.server.rst-frames-window must be a whole number of seconds,"
                    + " at least 1s, got " + rstFramesWindow);
        }
        this.rstFramesWindow = rstFramesWindow;
    }

    public boolean isDirectExecutor() {
        return directExecutor;
    }

    public void setDirectExecutor(boolean directExecutor) {
        this.directExecutor = directExecutor;
    }

    public int getExecutorThreads() {
        return executorThreads;
    }

    public void setExecutorThreads(int executorThreads) {
        if (executorThreads < 1) {
            throw new IllegalArgumentException(
                    "grpcops.server.executor-threads must be at least 1, got " + executorThreads);
        }
        this.executorThreads = executorThreads;
    }

    public int getExecutorQueue() {
        return executorQueue;
    }

    public void setExecutorQueue(int executorQueue) {
        if (executorQueue < 1) {
            throw new IllegalArgumentException(
                    "grpcops.server.executor-queue must be at least 1, got " + executorQueue);
        }
        this.executorQueue = executorQueue;
    }

    public Duration getBadRequestLogInterval() {
        return badRequestLogInterval;
    }

    public void setBadRequestLogInterval(Duration badRequestLogInterval) {
        if (badRequestLogInterval == null || badRequestLogInterval.isNegative()) {
            throw new IllegalArgumentException(
                    "grpcops.server.bad-request-log-interval must not be negative, got " + badRequestLogInterval);
        }
        this.badRequestLogInterval = badRequestLogInterval;
    }
}
