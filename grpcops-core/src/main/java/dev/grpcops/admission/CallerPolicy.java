package dev.grpcops.admission;

import java.net.SocketAddress;
import java.util.EnumMap;
import java.util.Map;

/**
 * Turns a call's metadata into its {@link Caller} and priority level: criticality picks the level
 * unless the operator mapped the caller to one; a caller's criticality is capped by its allowance
 * (a caller may lower its own, not raise it past that).
 */
public final class CallerPolicy {

    private final Map<Criticality, String> criticalityLevels;
    private final Map<String, String> callerLevels;
    private final Map<String, Criticality> callerCaps;
    private final Criticality defaultCap;
    /** Whether any rule needs the caller's id; if not, the peer address is never turned into a string per call. */
    private final boolean rulesByCaller;

    /**
     * @param criticalityLevels the level of each criticality (all three must be mapped)
     * @param callerLevels levels for chosen callers, whatever criticality they claim
     * @param callerCaps the highest criticality chosen callers may claim
     * @param defaultCap the highest criticality any other caller may claim
     */
    public CallerPolicy(
            Map<Criticality, String> criticalityLevels,
            Map<String, String> callerLevels,
            Map<String, Criticality> callerCaps,
            Criticality defaultCap) {
        for (Criticality criticality : Criticality.values()) {
            if (!criticalityLevels.containsKey(criticality)) {
                throw new InvalidAdmissionConfigException(
                        "criticality-levels." + criticality.value(), "must name a priority level");
            }
        }
        this.criticalityLevels = new EnumMap<>(criticalityLevels);
        this.callerLevels = Map.copyOf(callerLevels);
        this.callerCaps = Map.copyOf(callerCaps);
        this.defaultCap = defaultCap;
        this.rulesByCaller = !callerLevels.isEmpty() || !callerCaps.isEmpty();
    }

    /** Every caller gets the level named after its criticality, capped at nothing. */
    public static CallerPolicy byCriticality() {
        Map<Criticality, String> levels = new EnumMap<>(Criticality.class);
        for (Criticality criticality : Criticality.values()) {
            levels.put(criticality, criticality.value());
        }
        return new CallerPolicy(levels, Map.of(), Map.of(), Criticality.CRITICAL);
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
}
