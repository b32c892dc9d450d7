package dev.grpcops.internal;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;

/**
 * A shared secret a caller presents (the admin token): kept as its SHA-256 digest, and compared
 * with what a call sent in constant time. Digests have one length whatever was sent, so the
 * comparison tells neither the token nor its length.
 */
public final class SecretToken {

    private final byte[] digest;

    private SecretToken(String token) {
        this.digest = sha256(token);
    }

    /** The secret {@code token} (surrounding whitespace ignored); null when it is null or blank. */
    public static SecretToken of(String token) {
        return token == null || token.isBlank() ? null : new SecretToken(token.strip());
    }

    /** Whether {@code presented} (surrounding whitespace ignored) is this secret; false for null. */
    public boolean matches(String presented) {
        return presented != null && MessageDigest.isEqual(digest, sha256(presented.strip()));
    }

    private static byte[] sha256(String value) {
        try {
            return MessageDigest.getInstance("SHA-256").digest(value.getBytes(StandardCharsets.UTF_8));
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("every JVM has SHA-256", e);
        }
    }
}
