package dev.grpcops.admin;

import java.util.Locale;
import java.util.Optional;
import java.util.Set;
import org.jspecify.annotations.Nullable;

/**
 * Which admin tokens a service accepts to be configured with: the one place that knows the
 * placeholders shipped in examples, and the minimum length. A token that breaks these rules is
 * refused when the service starts; an unset or blank token is allowed (admin calls are then
 * refused, see {@code AdminAuthorizationInterceptor}).
 */
public final class AdminTokens {

    /** Fewer characters than this, and a token is refused at start. */
    public static final int MIN_LENGTH = 16;

    /**
     * Values that appear in examples, manifests and compose files (ours and everyone's), lower
     * case: refused whatever their case.
     */
    public static final Set<String> PLACEHOLDERS = Set.of(
            "replace-me-before-deploying",
            "dev-only-change-me",
            "changeme",
            "change-me",
            "secret",
            "token",
            "admin",
            "password");

    /** How to make a good one, as told in every refusal. */
    public static final String HOW_TO_GENERATE = "openssl rand -hex 32";

    private AdminTokens() {}

    /**
     * Why {@code token} must not be used, or empty if it may (also when it is null or blank:
     * that disables admin operations). The token is taken without surrounding whitespace, and
     * the reason never repeats it.
     */
    public static Optional<String> problem(String token) {
        if (token == null || token.isBlank()) {
            return Optional.empty();
        }
        String value = token.strip();
        if (PLACEHOLDERS.contains(value.toLowerCase(Locale.ROOT))) {
            return Optional.of("is a known placeholder, not a secret");
        }
        if (value.length() < MIN_LENGTH) {
            return Optional.of("has " + value.length() + " characters, fewer than the " + MIN_LENGTH + " required");
        }
        for (int i = 0; i < value.length(); i++) {
            char c = value.charAt(i);
            if (c < 0x20 || c > 0x7e) {
                return Optional.of(
                        "has a character that gRPC metadata cannot carry (only printable ASCII can be sent)");
            }
        }
        return Optional.empty();
    }

    /**
     * {@code token} without surrounding whitespace, or null if it is null or blank (admin
     * operations disabled).
     *
     * @param source where the token came from, named in the message, e.g.
     *     {@code "grpcops.admin.token (env GRPCOPS_ADMIN_TOKEN)"}
     * @throws UnusableAdminTokenException if {@link #problem} finds one
     */
    public static @Nullable String requireUsable(@Nullable String token, String source) {
        Optional<String> problem = problem(token);
        if (problem.isPresent()) {
            throw new UnusableAdminTokenException(source, problem.get());
        }
        return token == null || token.isBlank() ? null : token.strip();
    }

    /** A configured admin token that must not be used: a placeholder, or too short to be a secret. */
    public static final class UnusableAdminTokenException extends IllegalArgumentException {

        private static final long serialVersionUID = 1L;

        private final String source;
        private final String problem;

        UnusableAdminTokenException(String source, String problem) {
            super(source + " " + problem + ". " + howToSet(source));
            this.source = source;
            this.problem = problem;
        }

        /** Where the token came from, e.g. {@code grpcops.admin.token (env GRPCOPS_ADMIN_TOKEN)}. */
        public String source() {
            return source;
        }

        /** What is wrong with it, without its value. */
        public String problem() {
            return problem;
        }

        /** What to do instead. */
        public static String howToSet(String source) {
            return "Set " + source + " to a random value of at least " + MIN_LENGTH
                    + " characters, e.g. the output of `" + HOW_TO_GENERATE
                    + "`, or leave it unset to disable admin operations";
        }
    }
}
