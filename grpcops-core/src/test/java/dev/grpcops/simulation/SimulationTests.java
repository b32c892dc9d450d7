package dev.grpcops.simulation;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.List;
import java.util.stream.LongStream;
import java.util.stream.Stream;
import org.junit.jupiter.api.DynamicTest;
import org.junit.jupiter.api.TestFactory;
import org.junit.jupiter.api.Timeout;

/**
 * The library's mechanisms together in generated scenarios ({@link Simulation}): seeded and
 * reproducible, the invariants checked after every simulated millisecond. The build runs the seeds
 * that once failed and the first {@code simulation.seeds} (40, about 20 s); {@code
 * scripts/simulate.sh} runs as many as asked, from any first seed. A failing seed prints itself,
 * its scenario and what broke: fix the cause, then add the seed to {@link #REGRESSIONS}.
 */
@Timeout(300)
class SimulationTests {

    /**
     * Seeds that once broke an invariant, each kept once its cause was fixed. 149, 177, 649: a flow
     * whose callers withdrew most of its queued calls looked starved, the fairness check counting
     * only the seats it was served, not those admission charged it for what it withdrew. 5520: the
     * first fairness window was judged a millisecond in, as if it had lasted since the clock's zero.
     */
    static final long[] REGRESSIONS = {149, 177, 649, 5520};

    private static final long FIRST_SEED = Long.getLong("simulation.first-seed", 1);
    private static final long SEEDS = Long.getLong("simulation.seeds", 40);
    private static final Duration LENGTH = Duration.ofSeconds(Long.getLong("simulation.length", 20));

    @TestFactory
    Stream<DynamicTest> seedsThatOnceFailed() {
        return LongStream.of(REGRESSIONS).mapToObj(seed -> DynamicTest.dynamicTest("seed " + seed, () -> holds(seed)));
    }

    @TestFactory
    Stream<DynamicTest> generatedSeeds() {
        return LongStream.range(FIRST_SEED, FIRST_SEED + SEEDS)
                .mapToObj(seed -> DynamicTest.dynamicTest("seed " + seed, () -> holds(seed)));
    }

    /** The same seeds, every call with a deadline of about a second (see {@link Scenario#tight}). */
    @TestFactory
    Stream<DynamicTest> generatedSeedsWithTightDeadlines() {
        return LongStream.range(FIRST_SEED, FIRST_SEED + SEEDS)
                .mapToObj(seed ->
                        DynamicTest.dynamicTest("seed " + seed + ", tight", () -> holds(Scenario.tight(seed, LENGTH))));
    }

    private static void holds(long seed) {
        holds(Scenario.generate(seed, LENGTH));
    }

    private static void holds(Scenario scenario) {
        Simulation simulation = new Simulation(scenario);
        List<String> broken = simulation.run();
        if (Boolean.getBoolean("simulation.report")) {
            System.out.println(simulation.report());
        }
        assertThat(broken)
                .as("%s\nwhat happened: %s", scenario, simulation.report())
                .isEmpty();
    }
}
