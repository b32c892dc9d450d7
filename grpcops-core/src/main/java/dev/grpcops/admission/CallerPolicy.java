package dev.grpcops.admission;

import java.net.SocketAddress;
import java.util.EnumMap;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Objects;

/**
 * Turns a call's metadata into its {@link Caller} and priority level: criticality picks the level
 * unless the operator mapped the caller to one; a caller's criticality is capped by its allowance
 * (a caller may lower its own, not raise it past that).
 */
public final class CallerPolicy {

    /** Every caller gets the level named after its criticality, and may claim any criticality. */
    public static final CallerPolicy DEFAULTS = builder().build();

    private final Map<Criticality, String> criticalityLevels;
    private final Map<String, String> callerLevels;
    private final Map<String, Criticality> callerCaps;
    private final Criticality defaultCap;
    /** Whether any rule needs the caller's id; if not, the peer address is never turned into a string per call. */
    private final boolean rulesByCaller;

    private CallerPolicy(Builder builder) {
        for (Criticality criticality : Criticality.values()) {
            if (!builder.criticalityLevels.containsKey(criticality)) {
                throw new InvalidAdmissionConfigException(
                        "criticality-levels." + criticality.value(), "must name a priority level");
            }
        }
        this.criticalityLevels = new EnumMap<>(builder.criticalityLevels);
        this.callerLevels = Map.copyOf(builder.callerLevels);
        this.callerCaps = Map.copyOf(builder.callerCaps);
        this.defaultCap = builder.defaultCap;
        this.rulesByCaller = !callerLevels.isEmpty() || !callerCaps.isEmpty();
    }

    /**
     * Starts from {@link #DEFAULTS}: each criticality goes to the level named after it, and
     * any caller may claim any criticality.
     */
    public static Builder builder() {
        return new Builder();
    }

    /** {@link #DEFAULTS}: every caller gets the level named after its criticality, capped at nothing. */
    public static CallerPolicy byCriticality() {
        return DEFAULTS;
    }

    /** This policy's rules, to add or change some. */
    public Builder toBuilder() {
        Builder builder = builder().criticalityLevels(criticalityLevels).defaultCap(defaultCap);
        callerLevels.forEach(builder::callerLevel);
        callerCaps.forEach(builder::callerCap);
        return builder;
    }

    /** The caller of a call with these header values (either may be null) from {@code peer}. */
    public Caller classify(String callerHeader, String criticalityHeader, SocketAddress peer) {
        Criticality claimed = Criticality.parse(criticalityHeader);
        Caller unchecked = Caller.of(callerHeader, peer, claimed);
        Criticality cap = rulesByCaller ? callerCaps.getOrDefault(unchecked.id(), defaultCap) : defaultCap;
        Criticality granted = claimed.atMost(cap);
        return granted == claimed ? unchecked : Caller.of(callerHeader, peer, granted);
    }

    /** The priority level {@code caller}'s calls join. */
    public String levelOf(Caller caller) {
        if (rulesByCaller) {
            String level = callerLevels.get(caller.id());
            if (level != null) {
                return level;
            }
        }
        return criticalityLevels.get(caller.criticality());
    }

    /** Every level the policy can send calls to, to check against the configured levels. */
    Map<String, String> referencedLevels() {
        Map<String, String> referenced = new java.util.LinkedHashMap<>();
        criticalityLevels.forEach(
                (criticality, level) -> referenced.put("criticality-levels." + criticality.value(), level));
        callerLevels.forEach((caller, level) -> referenced.put("callers." + caller + ".level", level));
        return referenced;
    }

    /** What an operator decides: levels by criticality, and rules for chosen callers. */
    public static final class Builder {

        private final Map<Criticality, String> criticalityLevels = new EnumMap<>(Criticality.class);
        private final Map<String, String> callerLevels = new LinkedHashMap<>();
        private final Map<String, Criticality> callerCaps = new LinkedHashMap<>();
        private Criticality defaultCap = Criticality.CRITICAL;

        private Builder() {
            for (Criticality criticality : Criticality.values()) {
                criticalityLevels.put(criticality, criticality.value());
            }
        }

        /** The level calls of {@code criticality} join. */
        public Builder criticalityLevel(Criticality criticality, String level) {
            criticalityLevels.put(
                    Objects.requireNonNull(criticality, "criticality"), Objects.requireNonNull(level, "level"));
            return this;
        }

        /** The level of each criticality, in place of the ones set so far: all three must be named. */
        public Builder criticalityLevels(Map<Criticality, String> levels) {
            criticalityLevels.clear();
            criticalityLevels.putAll(levels);
            return this;
        }

        /** Every criticality to one level (a server with a single level). */
        public Builder everyCriticalityTo(String level) {
            for (Criticality criticality : Criticality.values()) {
                criticalityLevel(criticality, level);
            }
            return this;
        }

        /** {@code caller}'s calls join {@code level}, whatever criticality they claim. */
        public Builder callerLevel(String caller, String level) {
            callerLevels.put(Objects.requireNonNull(caller, "caller"), Objects.requireNonNull(level, "level"));
            return this;
        }

        /** The highest criticality {@code caller} may claim; it may always claim less. */
        public Builder callerCap(String caller, Criticality cap) {
            callerCaps.put(Objects.requireNonNull(caller, "caller"), Objects.requireNonNull(cap, "cap"));
            return this;
        }

        /** The highest criticality a caller without its own cap may claim; {@code critical} by default. */
        public Builder defaultCap(Criticality defaultCap) {
            this.defaultCap = Objects.requireNonNull(defaultCap, "defaultCap");
            return this;
        }

        /** @throws InvalidAdmissionConfigException if a criticality has no level */
        public CallerPolicy build() {
            return new CallerPolicy(this);
        }
    }
}
