package dev.grpcops.spring.admin;

import static org.assertj.core.api.Assertions.assertThat;

import dev.grpcops.admin.AdminRateLimit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * {@code grpcops.admin.rate-limit.*} and {@code refusal-log-interval} left unset give the core's
 * {@link AdminRateLimit#DEFAULTS} (the properties keep literal values so that the generated metadata,
 * and the docs' defaults, show them).
 */
@Timeout(30)
class AdminPropertiesDefaultsTests {

    @Test
    void unsetRateLimitPropertiesGiveTheCoresRateLimit() {
        AdminProperties properties = new AdminProperties();

        assertThat(properties.toRateLimit()).isEqualTo(AdminRateLimit.DEFAULTS);
        assertThat(properties.getRefusalLogInterval()).isEqualTo(AdminRateLimit.DEFAULTS.logInterval());
    }
}
