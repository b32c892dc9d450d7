package dev.grpcops.admission;

import java.util.Locale;

/**
 * How much a call matters to its caller, from metadata {@code x-grpcops-criticality} (design §9).
 * Absent or unknown values mean {@link #DEFAULT}: a typo never raises a call's priority.
 */
public enum Criticality {
    CRITICAL,
    DEFAULT,
    SHEDDABLE;

    /** The criticality a header value names; {@link #DEFAULT} for null or anything else. */
    public static Criticality parse(String value) {
        if (value == null) {
            return DEFAULT;
        }
        return switch (value.trim().toLowerCase(Locale.ROOT)) {
            case "critical" -> CRITICAL;
            case "sheddable" -> SHEDDABLE;
            default -> DEFAULT;
        };
    }

    /** This criticality, lowered to {@code cap} if it claims more: a caller may lower its own, not raise it. */
    public Criticality atMost(Criticality cap) {
        return ordinal() < cap.ordinal() ? cap : this;
    }

    /** The value as it travels in metadata and in property keys. */
    public String value() {
        return name().toLowerCase(Locale.ROOT);
    }
}
