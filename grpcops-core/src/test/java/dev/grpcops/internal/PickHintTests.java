package dev.grpcops.internal;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

/** Two attempts of one call keep away from each other, whichever the balancer picks first. */
class PickHintTests {

    @Test
    void aHedgePickedBeforeItsFirstSendsTheFirstElsewhere() {
        PickHint first = PickHint.first();
        PickHint hedge = PickHint.avoiding(first);
        assertThat(hedge.avoid()).as("the first has no replica yet").isNull();

        hedge.picked("replica-2");
        assertThat(first.avoid()).as("the first, picked after its hedge").isEqualTo("replica-2");
    }

    @Test
    void aHedgePickedAfterItsFirstGoesElsewhere() {
        PickHint first = PickHint.first();
        first.picked("replica-1");
        PickHint hedge = PickHint.avoiding(first);
        assertThat(hedge.avoid()).isEqualTo("replica-1");
    }

    @Test
    void aFirstAloneAvoidsNothing() {
        assertThat(PickHint.first().avoid()).isNull();
    }
}
