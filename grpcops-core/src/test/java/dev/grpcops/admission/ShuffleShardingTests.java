package dev.grpcops.admission;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.Arrays;
import java.util.HashSet;
import java.util.Set;
import java.util.stream.IntStream;
import org.junit.jupiter.api.Test;

class ShuffleShardingTests {

    private final ShuffleSharding dealer = new ShuffleSharding(64, 8);

    @Test
    void aFlowAlwaysDrawsTheSameHandOfDistinctQueues() {
        int[] hand = dealer.deal("tenant-a");
        assertThat(dealer.deal("tenant-a")).containsExactly(hand);
        assertThat(Arrays.stream(hand).boxed().collect(java.util.stream.Collectors.toSet()))
                .hasSize(8);
        assertThat(Arrays.stream(hand).boxed())
                .allSatisfy(queue -> assertThat(queue).isBetween(0, 63));
    }

    @Test
    void differentFlowsRarelyShareAWholeHand() {
        // Two flows with the same hand could crowd each other out; with 64 queues and 8 cards that
        // needs the same 8 of C(64,8) = 4.4e9 sets.
        Set<String> hands = new HashSet<>();
        IntStream.range(0, 10_000).forEach(i -> {
            int[] hand = dealer.deal("caller-" + i);
            Arrays.sort(hand);
            hands.add(Arrays.toString(hand));
        });
        assertThat(hands).hasSize(10_000);
    }

    @Test
    void everyQueueIsDealtAboutEquallyOften() {
        int[] dealt = new int[64];
        IntStream.range(0, 8_000)
                .forEach(i -> Arrays.stream(dealer.deal("10.0.0." + i)).forEach(q -> dealt[q]++));
        // 64 000 cards over 64 queues: 1000 each on average.
        assertThat(Arrays.stream(dealt).boxed())
                .allSatisfy(count -> assertThat(count).isBetween(850, 1150));
    }
}
