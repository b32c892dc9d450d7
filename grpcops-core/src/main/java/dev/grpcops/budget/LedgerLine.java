package dev.grpcops.budget;

import dev.grpcops.Experimental;
import io.grpc.Metadata;
import java.time.Duration;
import java.util.HashMap;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;

/**
 * One hop's line in a call's budget ledger (design §19): the budget the hop received, how long the
 * call waited for a seat, how long its handler took, the largest deadline it handed a downstream
 * call, and what was left when it answered (its slack; negative when it answered late).
 *
 * <p>A caller who presents the ledger token (its own secret, never the admin token) in {@link
 * #HEADER} gets the ledger back in the trailers under the same key: one value per hop, the
 * answering hop first, then what its downstream calls returned, {@link #depth()} counting the hops
 * from the one asked. {@code grpcops call … --ledger} prints it. A value that is not a line (a
 * hop of another version, a mangled or oversized value) is left out; nothing here throws on what
 * a peer sent.
 */
@Experimental("The ledger's columns and header format may grow")
public final class LedgerLine {

    /** The request header that asks for the ledger (its value: the admin token), and the trailer that carries it. */
    public static final String HEADER = "x-grpcops-ledger";

    /** {@link #HEADER} as the metadata key that asks for the ledger and carries it back. */
    public static final Metadata.Key<String> KEY = Metadata.Key.of(HEADER, Metadata.ASCII_STRING_MARSHALLER);

    /**
     * A trailer value that is not a line: {@code omitted=N} lines of downstream calls were left out
     * (a hop passes back at most two dozen, to keep the trailers within what a peer accepts).
     */
    public static final String OMITTED = "omitted=";

    /** The longest hop name a line carries: a gRPC service name. */
    public static final int MAX_HOP_LENGTH = 200;

    /** The longest trailer value read as a line; a longer one is left out unread. */
    static final int MAX_VALUE_LENGTH = 512;

    private final String hop;
    private final int depth;
    // In nanoseconds: a line is made for every call answered, and most are read for one number.
    private final long received;
    private final boolean defaulted;
    private final long queued;
    private final long handler;
    private final long granted;
    private final long slack;

    private LedgerLine(
            String hop,
            int depth,
            long received,
            boolean defaulted,
            long queued,
            long handler,
            long granted,
            long slack) {
        this.hop = hop;
        this.depth = depth;
        this.received = received;
        this.defaulted = defaulted;
        this.queued = queued;
        this.handler = handler;
        this.granted = granted;
        this.slack = slack;
    }

    /**
     * The line of the hop that was asked (depth 0), its times in nanoseconds: what a served call's
     * ledger makes as it answers, without a builder or a {@code Duration} per value.
     *
     * @throws IllegalArgumentException when {@code hop} is not a usable name (see {@link #builder})
     */
    public static LedgerLine of(
            String hop,
            long receivedNanos,
            boolean defaulted,
            long queuedNanos,
            long handlerNanos,
            long grantedNanos,
            long slackNanos) {
        requireUsableHop(hop);
        return new LedgerLine(hop, 0, receivedNanos, defaulted, queuedNanos, handlerNanos, grantedNanos, slackNanos);
    }

    /** A line for {@code hop} (the served service's name); every duration zero until set. */
    public static Builder builder(String hop) {
        return new Builder(hop);
    }

    /** The served service, e.g. {@code chain.v1.Stock}. */
    public String hop() {
        return hop;
    }

    /** 0 for the hop that was asked, 1 for the hops it called, and so on. */
    public int depth() {
        return depth;
    }

    /** The budget on arrival: the caller's deadline, or the default when it sent none. */
    public Duration received() {
        return Duration.ofNanos(received);
    }

    /** True when the caller sent no deadline and the default budget applied. */
    public boolean defaulted() {
        return defaulted;
    }

    /** From arrival to the handler's start: the wait for a seat in admission. */
    public Duration queued() {
        return Duration.ofNanos(queued);
    }

    /** From the handler's start to the answer, downstream calls included. */
    public Duration handler() {
        return Duration.ofNanos(handler);
    }

    /** The largest deadline handed to a downstream call; zero when none was sent. */
    public Duration granted() {
        return Duration.ofNanos(granted);
    }

    /** What was left of the budget when the hop answered; negative when it answered after the deadline. */
    public Duration slack() {
        return Duration.ofNanos(slack);
    }

    /** {@link #slack()} in nanoseconds. */
    public long slackNanos() {
        return slack;
    }

    /** This line as one hop further from the asker: what a hop does with the lines its downstream calls return. */
    public LedgerLine deeper() {
        return new LedgerLine(hop, depth + 1, received, defaulted, queued, handler, granted, slack);
    }

    /** The trailer value: {@code hop=…;depth=…;received_ms=…;default=…;queued_ms=…;handler_ms=…;granted_ms=…;slack_ms=…}. */
    public String toHeaderValue() {
        return String.format(
                Locale.ROOT,
                "hop=%s;depth=%d;received_ms=%.3f;default=%d;queued_ms=%.3f;handler_ms=%.3f;granted_ms=%.3f;slack_ms=%.3f",
                hop,
                depth,
                millis(received),
                defaulted ? 1 : 0,
                millis(queued),
                millis(handler),
                millis(granted),
                millis(slack));
    }

    /** How many lines {@code value} says were left out; 0 when it is a line, or not a count. */
    public static int omittedIn(String value) {
        if (value == null || !value.startsWith(OMITTED) || value.length() > MAX_VALUE_LENGTH) {
            return 0;
        }
        try {
            return Math.max(
                    0, Integer.parseInt(value.substring(OMITTED.length()).trim()));
        } catch (NumberFormatException e) {
            return 0;
        }
    }

    /** The line a trailer value holds; empty when it is not one (a hop of another version, a mangled value). */
    public static Optional<LedgerLine> parse(String value) {
        if (value == null || value.length() > MAX_VALUE_LENGTH) {
            return Optional.empty();
        }
        Map<String, String> fields = new HashMap<>();
        for (String field : value.split(";")) {
            int equals = field.indexOf('=');
            if (equals > 0) {
                fields.put(
                        field.substring(0, equals).trim(),
                        field.substring(equals + 1).trim());
            }
        }
        try {
            String hop = fields.get("hop");
            if (!usableHop(hop)) {
                return Optional.empty();
            }
            return Optional.of(builder(hop)
                    .depth(Integer.parseInt(fields.getOrDefault("depth", "0")))
                    .received(duration(fields.get("received_ms")))
                    .defaulted("1".equals(fields.get("default")))
                    .queued(duration(fields.get("queued_ms")))
                    .handler(duration(fields.get("handler_ms")))
                    .granted(duration(fields.get("granted_ms")))
                    .slack(duration(fields.get("slack_ms")))
                    .build());
        } catch (IllegalArgumentException e) { // a number that is not one, a duration out of range
            return Optional.empty();
        } catch (ArithmeticException e) {
            return Optional.empty();
        }
    }

    private static void requireUsableHop(String hop) {
        if (!usableHop(Objects.requireNonNull(hop, "hop"))) {
            throw new IllegalArgumentException("hop must be a name of 1-" + MAX_HOP_LENGTH
                    + " characters without ';' or '=', got '"
                    + (hop.length() > 40 ? hop.substring(0, 40) + "…" : hop) + "'");
        }
    }

    private static boolean usableHop(String hop) {
        return hop != null
                && !hop.isEmpty()
                && hop.length() <= MAX_HOP_LENGTH
                && hop.indexOf(';') < 0
                && hop.indexOf('=') < 0;
    }

    private static double millis(long nanos) {
        return nanos / 1e6;
    }

    private static Duration duration(String millis) {
        if (millis == null) {
            return Duration.ZERO;
        }
        double value = Double.parseDouble(millis);
        if (!Double.isFinite(value) || Math.abs(value) > 1e12) {
            throw new NumberFormatException("not a duration in milliseconds: " + millis);
        }
        return Duration.ofNanos(Math.round(value * 1e6));
    }

    @Override
    public boolean equals(Object other) {
        return other instanceof LedgerLine line && line.toHeaderValue().equals(toHeaderValue());
    }

    @Override
    public int hashCode() {
        return toHeaderValue().hashCode();
    }

    @Override
    public String toString() {
        return "LedgerLine[" + toHeaderValue() + "]";
    }

    /** Sets a line's values; every duration zero until set. */
    public static final class Builder {

        private final String hop;
        private int depth;
        private Duration received = Duration.ZERO;
        private boolean defaulted;
        private Duration queued = Duration.ZERO;
        private Duration handler = Duration.ZERO;
        private Duration granted = Duration.ZERO;
        private Duration slack = Duration.ZERO;

        private Builder(String hop) {
            requireUsableHop(hop);
            this.hop = hop;
        }

        public Builder depth(int depth) {
            this.depth = depth;
            return this;
        }

        public Builder received(Duration received) {
            this.received = Objects.requireNonNull(received, "received");
            return this;
        }

        public Builder defaulted(boolean defaulted) {
            this.defaulted = defaulted;
            return this;
        }

        public Builder queued(Duration queued) {
            this.queued = Objects.requireNonNull(queued, "queued");
            return this;
        }

        public Builder handler(Duration handler) {
            this.handler = Objects.requireNonNull(handler, "handler");
            return this;
        }

        public Builder granted(Duration granted) {
            this.granted = Objects.requireNonNull(granted, "granted");
            return this;
        }

        public Builder slack(Duration slack) {
            this.slack = Objects.requireNonNull(slack, "slack");
            return this;
        }

        public LedgerLine build() {
            return new LedgerLine(
                    hop,
                    depth,
                    received.toNanos(),
                    defaulted,
                    queued.toNanos(),
                    handler.toNanos(),
                    granted.toNanos(),
                    slack.toNanos());
        }
    }
}
