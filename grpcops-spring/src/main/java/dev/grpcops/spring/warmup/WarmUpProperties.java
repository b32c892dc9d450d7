package dev.grpcops.spring.warmup;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.springframework.boot.context.properties.ConfigurationProperties;

/**
 * Warm-up before SERVING, under {@code grpcops.warmup}: once the server listens, it is sent these
 * calls through its own port, and only then reports SERVING, so that its first real callers meet a
 * warm JVM. Nothing is sent unless calls are listed.
 */
@ConfigurationProperties("grpcops.warmup")
public class WarmUpProperties {

    /** Whether the listed calls are sent before SERVING. */
    private boolean enabled = true;

    /** The calls to send, in this order. */
    private List<Call> calls = new ArrayList<>();

    /** Warm-up calls outstanding at once. */
    private int concurrency = 4;

    /** Each warm-up call's deadline. */
    private Duration deadline = Duration.ofSeconds(1);

    /** No warm-up call is sent after this long; SERVING follows when those in flight end. */
    private Duration timeLimit = Duration.ofSeconds(30);

    public boolean isEnabled() {
        return enabled;
    }

    public void setEnabled(boolean enabled) {
        this.enabled = enabled;
    }

    public List<Call> getCalls() {
        return calls;
    }

    public void setCalls(List<Call> calls) {
        this.calls = calls;
    }

    public int getConcurrency() {
        return concurrency;
    }

    public void setConcurrency(int concurrency) {
        if (concurrency < 1) {
            throw new IllegalArgumentException("grpcops.warmup.concurrency must be at least 1, got " + concurrency);
        }
        this.concurrency = concurrency;
    }

    public Duration getDeadline() {
        return deadline;
    }

    public void setDeadline(Duration deadline) {
        this.deadline = positive(deadline, "grpcops.warmup.deadline");
    }

    public Duration getTimeLimit() {
        return timeLimit;
    }

    public void setTimeLimit(Duration timeLimit) {
        this.timeLimit = positive(timeLimit, "grpcops.warmup.time-limit");
    }

    private static Duration positive(Duration value, String property) {
        if (value == null || value.isZero() || value.isNegative()) {
            throw new IllegalArgumentException(property + " must be positive, got " + value);
        }
        return value;
    }

    /** One unary method of this server, one request, sent {@code count} times. */
    public static class Call {

        /** The method's full name, such as {@code chain.v1.Stock/Check}. */
        private String method;

        /** The request in protobuf's JSON mapping, such as {@code {"sku": "warm-up"}}. */
        private String request = "{}";

        /** How many times it is sent. */
        private int count = 1000;

        public String getMethod() {
            return method;
        }

        public void setMethod(String method) {
            this.method = method;
        }

        public String getRequest() {
            return request;
        }

        public void setRequest(String request) {
            this.request = request;
        }

        public int getCount() {
            return count;
        }

        public void setCount(int count) {
            if (count < 0) {
                throw new IllegalArgumentException("a warm-up call's count must not be negative, got " + count);
            }
            this.count = count;
        }
    }
}
