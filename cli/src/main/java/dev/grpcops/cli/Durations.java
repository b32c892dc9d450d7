package dev.grpcops.cli;

import java.time.Duration;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/** Durations as people type them: {@code 250ms}, {@code 3s}, {@code 1m}. */
final class Durations {

    private static final Pattern FORM = Pattern.compile("(\\d+)(ms|s|m)");

    private Durations() {}

    static Duration parse(String text) {
        Matcher m = FORM.matcher(text.trim());
        if (!m.matches()) {
            throw new IllegalArgumentException("'" + text + "' is not a duration like 250ms, 3s or 1m");
        }
        long amount = Long.parseLong(m.group(1));
        return switch (m.group(2)) {
            case "ms" -> Duration.ofMillis(amount);
            case "s" -> Duration.ofSeconds(amount);
            default -> Duration.ofMinutes(amount);
        };
    }
}
