package dev.grpcops.spring;

import static org.assertj.core.api.Assertions.assertThat;

import dev.grpcops.ChannelStack;
import dev.grpcops.ServerStack;
import java.util.Arrays;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The offsets both starters place the library's interceptors at keep the stacks' order (lower runs
 * first), with admin authorization alone outside the integration's metrics interceptor.
 */
@Timeout(10)
class LayerOffsetsTests {

    @Test
    void serverOffsetsRiseInServerStacksOrderWithOnlyAdminAuthorizationOutsideMetrics() {
        List<Integer> offsets =
                Arrays.stream(ServerStack.Layer.values()).map(LayerOffsets::of).toList();
        assertThat(offsets).isSorted().doesNotHaveDuplicates();
        for (ServerStack.Layer layer : ServerStack.Layer.values()) {
            assertThat(LayerOffsets.of(layer) < 0)
                    .as("%s outside the metrics interceptor", layer)
                    .isEqualTo(layer == ServerStack.Layer.ADMIN_AUTHORIZATION);
        }
    }

    @Test
    void clientOffsetsRiseInChannelStacksOrderAndThePerChannelLayersAreInnermost() {
        List<Integer> offsets =
                Arrays.stream(ChannelStack.Layer.values()).map(LayerOffsets::of).toList();
        assertThat(offsets).isSorted().allMatch(offset -> offset > 0);
        assertThat(LayerOffsets.of(ChannelStack.Layer.READINESS)).isEqualTo(Integer.MAX_VALUE);
    }
}
