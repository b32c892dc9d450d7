package dev.grpcops.retry;

import static org.assertj.core.api.Assertions.assertThat;

import dev.grpcops.testing.FakeClock;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

class HedgeWinsTests {

    /** {@code outcomes}: W a won hedge, L a lost one, in order; whether the target is losing after them. */
    static Stream<Arguments> outcomes() {
        return Stream.of(
                Arguments.of("no hedge decided yet", "", false),
                Arguments.of("seven lost", "L".repeat(7), false),
                Arguments.of("eight lost", "L".repeat(8), true),
                // A healthy target: a quarter to a half of the hedges win; one in eight is not losing either.
                Arguments.of("one in four won, for a long time", "LLLW".repeat(50), false),
                Arguments.of("one in eight won", ("W" + "L".repeat(7)).repeat(20), false),
                // A whole target slow: hardly any win.
                Arguments.of("one in thirteen won", "L".repeat(9) + ("W" + "L".repeat(12)).repeat(10), true),
                Arguments.of("a win ends a long losing streak at once", "L".repeat(200) + "W", false),
                Arguments.of("and eight losses bring it back", "L".repeat(200) + "W" + "L".repeat(9), true));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("outcomes")
    void losingFollowsTheRecentOutcomes(String name, String outcomes, boolean losing) {
        HedgeWins wins = new HedgeWins(new FakeClock().nanoClock());
        for (char outcome : outcomes.toCharArray()) {
            if (outcome == 'W') {
                wins.won();
            } else {
                wins.lost();
            }
        }
        assertThat(wins.losing()).isEqualTo(losing);
        assertThat(wins.mayHedge()).as("a hedge may go out now").isTrue();
    }

    @Test
    void whileLosingOneHedgeASecondMayGoOut() {
        FakeClock clock = new FakeClock();
        HedgeWins wins = new HedgeWins(clock.nanoClock());
        for (int i = 0; i < 8; i++) {
            wins.lost();
        }
        assertThat(wins.mayHedge()).as("the first probe").isTrue();
        assertThat(wins.mayHedge()).as("a second, at once").isFalse();
        clock.forwardMillis(999);
        assertThat(wins.mayHedge()).as("999 ms later").isFalse();
        clock.forwardMillis(1);
        assertThat(wins.mayHedge()).as("a second later").isTrue();
        wins.won();
        assertThat(wins.mayHedge()).as("once the probe won").isTrue();
        assertThat(wins.mayHedge()).isTrue();
    }
}
