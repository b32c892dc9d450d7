package dev.grpcops.admin;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

import dev.grpcops.admin.internal.AdminAuthorizationInterceptor;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/** The rules a configured admin token must pass, and how the server reads the bearer scheme. */
class AdminTokensTests {

    private static final String SOURCE = "grpcops.admin.token (env GRPCOPS_ADMIN_TOKEN)";

    @ParameterizedTest
    @ValueSource(
            strings = {
                "replace-me-before-deploying",
                "Replace-Me-Before-Deploying",
                "dev-only-change-me",
                "DEV-ONLY-CHANGE-ME",
                "changeme",
                "ChangeMe",
                "change-me",
                "secret",
                "SECRET",
                "token",
                "admin",
                "password",
                "  replace-me-before-deploying  "
            })
    void knownPlaceholdersAreRefusedInAnyCase(String token) {
        assertThat(AdminTokens.problem(token)).hasValue("is a known placeholder, not a secret");
        AdminTokens.UnusableAdminTokenException refused = catchThrowableOfType(
                AdminTokens.UnusableAdminTokenException.class, () -> AdminTokens.requireUsable(token, SOURCE));
        assertThat(refused)
                .hasMessageContaining("grpcops.admin.token")
                .hasMessageContaining("GRPCOPS_ADMIN_TOKEN")
                .hasMessageContaining("openssl rand -hex 32")
                .hasMessageContaining("leave it unset");
        assertThat(refused.source()).isEqualTo(SOURCE);
    }

    @ParameterizedTest
    @ValueSource(strings = {"s3cret", "lab-token", "test-token", "fifteen-chars-x", "   fifteen-chars-x   "})
    void tokensShorterThanSixteenCharactersAreRefusedWithoutRepeatingThem(String token) {
        assertThat(AdminTokens.problem(token))
                .hasValueSatisfying(p -> assertThat(p).contains("fewer than the 16"));
        AdminTokens.UnusableAdminTokenException refused = catchThrowableOfType(
                AdminTokens.UnusableAdminTokenException.class, () -> AdminTokens.requireUsable(token, SOURCE));
        assertThat(refused).hasMessageContaining(SOURCE).hasMessageNotContaining(token.strip());
    }

    @Test
    void tokensThatMetadataCannotCarryAreRefused() {
        assertThat(AdminTokens.problem("sixteen-chars-xé")).isPresent();
        assertThat(AdminTokens.problem("sixteen-chars\u0001xx")).isPresent();
    }

    @Test
    void longRandomTokensAreUsableWithoutSurroundingWhitespace() {
        assertThat(AdminTokens.problem("sixteen-chars-xx")).isEmpty();
        assertThat(AdminTokens.requireUsable(
                        " 9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08\n", SOURCE))
                .isEqualTo("9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08");
    }

    @Test
    void unsetOrBlankIsAllowedAndDisablesAdminOperations() {
        assertThat(AdminTokens.problem(null)).isEmpty();
        assertThat(AdminTokens.problem("  ")).isEmpty();
        assertThat(AdminTokens.requireUsable(null, SOURCE)).isNull();
        assertThat(AdminTokens.requireUsable(" \t", SOURCE)).isNull();
    }

    @Test
    void theInterceptorRefusesToBeBuiltWithAnUnusableToken() {
        for (String token : List.of("replace-me-before-deploying", "s3cret")) {
            assertThat(catchThrowableOfType(
                            AdminTokens.UnusableAdminTokenException.class,
                            () -> new AdminAuthorizationInterceptor(List.of(), token, AdminListener.NONE)))
                    .as(token)
                    .hasMessageContaining("openssl rand -hex 32");
        }
    }

    @Test
    void bearerSchemeIsCaseInsensitiveAndWhitespaceTolerant() {
        assertThat(AdminCredentials.bearerToken("Bearer abc")).isEqualTo("abc");
        assertThat(AdminCredentials.bearerToken("bearer abc")).isEqualTo("abc");
        assertThat(AdminCredentials.bearerToken("BEARER abc")).isEqualTo("abc");
        assertThat(AdminCredentials.bearerToken("  Bearer \t abc  ")).isEqualTo("abc");
        assertThat(AdminCredentials.bearerToken("Bearer")).isNull();
        assertThat(AdminCredentials.bearerToken("Bearer   ")).isNull();
        assertThat(AdminCredentials.bearerToken("Bearerabc")).isNull();
        assertThat(AdminCredentials.bearerToken("Basic abc")).isNull();
        assertThat(AdminCredentials.bearerToken("")).isNull();
        assertThat(AdminCredentials.bearerToken(null)).isNull();
    }
}
