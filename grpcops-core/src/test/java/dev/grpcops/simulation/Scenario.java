package dev.grpcops.simulation;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.SplittableRandom;

/**
 * One generated world for {@link Simulation}: the callers at the front hop (how often, how wide,
 * how patient, whether they leave), the replicas behind it (how fast, and what goes wrong with each
 * and when), and the front's seats. Everything follows from the seed.
 */
record Scenario(long seed, Duration length, int frontSeats, List<Flow> flows, List<Replica> replicas) {

    /** One calling flow: a caller name, its criticality, and how its calls come. */
    record Flow(
            String name,
            String criticality,
            double perSecond,
            int burst,
            int maxWidth,
            long minDeadlineMillis,
            long maxDeadlineMillis,
            double noDeadlineShare,
            double leaveShare,
            long maxLeaveMillis) {

        @Override
        public String toString() {
            return String.format(
                    Locale.ROOT,
                    "%s(%s, %.0f/s x%d, width<=%d, deadline %d-%d ms%s, %.0f%% leave within %d ms)",
                    name,
                    criticality,
                    perSecond,
                    burst,
                    maxWidth,
                    minDeadlineMillis,
                    maxDeadlineMillis,
                    noDeadlineShare > 0 ? String.format(Locale.ROOT, ", %.0f%% none", noDeadlineShare * 100) : "",
                    leaveShare * 100,
                    maxLeaveMillis);
        }
    }

    /** What goes wrong with a replica, from {@code atMillis} for {@code forMillis}. */
    enum FaultKind {
        /** Every answer 200 ms later. */
        SLOW,
        /** No answer for 200 ms of every second. */
        STALL,
        /** Half its calls fail UNAVAILABLE. */
        FAILING,
        /** Few seats: it sheds with RESOURCE_EXHAUSTED. */
        SHEDDING,
        /** The process is gone (connections close, new ones refused), then starts again. */
        RESTART,
        /** Its node goes silent: no packet in or out, no FIN, no RST; then the network heals. */
        SILENT,
        /** SIGTERM: not serving (health), queued calls end UNAVAILABLE, then gone, then back. */
        DRAIN,
        /** Not there when the channel is made; listed all along, listening from {@code atMillis}. */
        ABSENT_AT_START
    }

    record Fault(FaultKind kind, long atMillis, long forMillis) {
        @Override
        public String toString() {
            return kind + "@" + atMillis + "+" + forMillis + "ms";
        }
    }

    /** One replica: its usual latency (exponential around the mean, on top of a floor) and its faults. */
    record Replica(double meanLatencyMillis, int seats, List<Fault> faults) {
        @Override
        public String toString() {
            return String.format(Locale.ROOT, "replica(%.1f ms, %d seats, %s)", meanLatencyMillis, seats, faults);
        }
    }

    /**
     * As {@link #generate}, every call with a deadline of about a second, as the suite's Checkouts
     * have: no call with a roomier deadline, nor one without, comes to try a replica that the
     * balancer would not risk a tight call on.
     */
    static Scenario tight(long seed, Duration length) {
        Scenario roomy = generate(seed, length);
        List<Flow> flows = new ArrayList<>();
        for (Flow flow : roomy.flows()) {
            flows.add(new Flow(
                    flow.name(),
                    flow.criticality(),
                    flow.perSecond(),
                    flow.burst(),
                    flow.maxWidth(),
                    900,
                    1_100,
                    0,
                    flow.leaveShare(),
                    flow.maxLeaveMillis()));
        }
        return new Scenario(seed, length, roomy.frontSeats(), List.copyOf(flows), roomy.replicas());
    }

    static Scenario generate(long seed, Duration length) {
        SplittableRandom random = new SplittableRandom(seed);
        long lengthMillis = length.toMillis();
        int replicaCount = 2 + random.nextInt(3);
        List<Replica> replicas = new ArrayList<>();
        for (int i = 0; i < replicaCount; i++) {
            List<Fault> faults = new ArrayList<>();
            // The first replica stays healthy, so that there is always one to go to; the others get
            // up to three faults each, which may overlap.
            int faultCount = i == 0 ? 0 : random.nextInt(4);
            for (int f = 0; f < faultCount; f++) {
                FaultKind kind = FaultKind.values()[random.nextInt(FaultKind.values().length)];
                if (kind == FaultKind.ABSENT_AT_START && f > 0) {
                    continue;
                }
                long at = kind == FaultKind.ABSENT_AT_START
                        ? 500 + random.nextLong(3_000)
                        : random.nextLong(lengthMillis * 2 / 3);
                long span = kind == FaultKind.ABSENT_AT_START ? 0 : 500 + random.nextLong(lengthMillis / 2);
                faults.add(new Fault(kind, at, span));
            }
            int seats = faults.stream().anyMatch(f -> f.kind() == FaultKind.SHEDDING) ? 2 + random.nextInt(3) : 64;
            replicas.add(new Replica(1 + random.nextDouble() * 15, seats, List.copyOf(faults)));
        }
        List<Flow> flows = new ArrayList<>();
        int flowCount = 2 + random.nextInt(4);
        String[] criticalities = {"critical", "default", "sheddable"};
        for (int i = 0; i < flowCount; i++) {
            boolean heavy = i == 0 || random.nextDouble() < 0.3;
            // Some flows leave most of their calls within milliseconds: a caller cancelling fan-outs.
            boolean leaver = random.nextDouble() < 0.25;
            double rate = heavy ? 100 + random.nextDouble() * 400 : 5 + random.nextDouble() * 40;
            // Mostly budgets a hop can work with (over reserve + min-downstream = 500 ms), a few not.
            long minDeadline = random.nextDouble() < 0.2 ? 100 + random.nextLong(400) : 500 + random.nextLong(500);
            double leaveShare = leaver
                    ? 0.5 + random.nextDouble() * 0.5
                    : random.nextDouble() < 0.4 ? random.nextDouble() * 0.5 : 0;
            flows.add(new Flow(
                    (heavy ? "flood-" : "polite-") + i,
                    criticalities[random.nextInt(criticalities.length)],
                    rate,
                    random.nextDouble() < 0.2 ? 5 + random.nextInt(40) : 1,
                    1 + random.nextInt(heavy ? 8 : 4),
                    minDeadline,
                    minDeadline + random.nextLong(2_000),
                    random.nextDouble() < 0.2 ? 0.1 : 0,
                    leaveShare,
                    leaver ? 1 + random.nextLong(20) : 1 + random.nextLong(300)));
        }
        return new Scenario(seed, length, 16 + random.nextInt(48), List.copyOf(flows), List.copyOf(replicas));
    }

    @Override
    public String toString() {
        return "seed " + seed + ": " + length.toSeconds() + " s, front " + frontSeats + " seats, flows " + flows
                + ", replicas " + replicas;
    }
}
