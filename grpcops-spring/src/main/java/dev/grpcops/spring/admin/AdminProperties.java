package dev.grpcops.spring.admin;

import dev.grpcops.admin.AdminRateLimit;
import dev.grpcops.admin.AdminTokens;
import java.time.Duration;
import org.springframework.boot.context.properties.ConfigurationProperties;

/** Authorization of admin operations, under {@code grpcops.admin}. */
@ConfigurationProperties("grpcops.admin")
public class AdminProperties {

    /** Where the token comes from, as every refusal names it. */
    static final String TOKEN_SOURCE = "grpcops.admin.token (env GRPCOPS_ADMIN_TOKEN)";

    /**
     * Shared secret callers send as metadata "authorization: Bearer <token>" (env
     * GRPCOPS_ADMIN_TOKEN), e.g. the output of "openssl rand -hex 32". Unset or blank: every admin
     * operation is refused. A known placeholder (replace-me-before-deploying, dev-only-change-me,
     * changeme, ...) or fewer than 16 characters: the service refuses to start.
     */
    private String token;

    /** Refused admin calls per caller address. */
    private final RateLimit rateLimit = new RateLimit();

    /** At most one WARN line per caller address per this interval, with the count of its refused admin calls. */
    private Duration refusalLogInterval = Duration.ofSeconds(10);

    public String getToken() {
        return token;
    }

    public void setToken(String token) {
        this.token = token;
    }

    /**
     * The token without surrounding whitespace, or null if unset or blank.
     *
     * @throws AdminTokens.UnusableAdminTokenException naming the property and how to set it, if
     *     the token is a known placeholder or too short (its value is never repeated)
     */
    String usableToken() {
        return AdminTokens.requireUsable(token, TOKEN_SOURCE);
    }

    public RateLimit getRateLimit() {
        return rateLimit;
    }

    public Duration getRefusalLogInterval() {
        return refusalLogInterval;
    }

    public void setRefusalLogInterval(Duration refusalLogInterval) {
        this.refusalLogInterval = positive("grpcops.admin.refusal-log-interval", refusalLogInterval);
    }

    public AdminRateLimit toRateLimit() {
        return AdminRateLimit.builder()
                .maxFailures(rateLimit.maxFailures)
                .window(rateLimit.window)
                .maxPeers(rateLimit.maxPeers)
                .maxRefusedOverall(rateLimit.maxRefusedOverall)
                .maxConcurrent(rateLimit.maxConcurrent)
                .logInterval(refusalLogInterval)
                .build();
    }

    private static Duration positive(String property, Duration value) {
        if (value == null || value.isNegative() || value.isZero()) {
            throw new IllegalArgumentException(property + " must be positive, got " + value);
        }
        return value;
    }

    /**
     * After {@code max-failures} refused admin calls (no or wrong credentials) from one address
     * within {@code window}, counted from the first of them, every admin call from that address
     * ends with RESOURCE_EXHAUSTED, its token not looked at, until the window has passed; after
     * {@code max-refused-overall} from all addresses but the loopback, every address but the
     * loopback. At most {@code max-concurrent} admin calls run at once.
     */
    public static class RateLimit {

        /** Refused admin calls from one address within the window after which its admin calls are refused unchecked. */
        private int maxFailures = 5;

        /** How long refused calls count toward max-failures, and how long an address over it stays refused. */
        private Duration window = Duration.ofSeconds(10);

        /** How many caller addresses are tracked at most (a few hundred bytes each); beyond, the least recently seen is forgotten. */
        private int maxPeers = 10_000;

        /**
         * Refused admin calls within the window from all addresses but the loopback after which
         * every address but the loopback is refused unchecked until the window has passed.
         */
        private int maxRefusedOverall = 100;

        /** Admin calls let through that may run at once; beyond, one ends RESOURCE_EXHAUSTED at once. */
        private int maxConcurrent = 4;

        public int getMaxRefusedOverall() {
            return maxRefusedOverall;
        }

        public void setMaxRefusedOverall(int maxRefusedOverall) {
            if (maxRefusedOverall < 1) {
                throw new IllegalArgumentException(
                        "grpcops.admin.rate-limit.max-refused-overall must be at least 1, got " + maxRefusedOverall);
            }
            this.maxRefusedOverall = maxRefusedOverall;
        }

        public int getMaxConcurrent() {
            return maxConcurrent;
        }

        public void setMaxConcurrent(int maxConcurrent) {
            if (maxConcurrent < 1) {
                throw new IllegalArgumentException(
                        "grpcops.admin.rate-limit.max-concurrent must be at least 1, got " + maxConcurrent);
            }
            this.maxConcurrent = maxConcurrent;
        }

        public int getMaxFailures() {
            return maxFailures;
        }

        public void setMaxFailures(int maxFailures) {
            if (maxFailures < 1) {
                throw new IllegalArgumentException(
                        "grpcops.admin.rate-limit.max-failures must be at least 1, got " + maxFailures);
            }
            this.maxFailures = maxFailures;
        }

        public Duration getWindow() {
            return window;
        }

        public void setWindow(Duration window) {
            this.window = positive("grpcops.admin.rate-limit.window", window);
        }

        public int getMaxPeers() {
            return maxPeers;
        }

        public void setMaxPeers(int maxPeers) {
            if (maxPeers < 1) {
                throw new IllegalArgumentException(
                        "grpcops.admin.rate-limit.max-peers must be at least 1, got " + maxPeers);
            }
            this.maxPeers = maxPeers;
        }
    }
}
