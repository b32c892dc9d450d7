package dev.grpcops.systemtest;

import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.parallel.ResourceLock;

/** {@link AbstractChainIT}'s checks against the three jars as users start them. */
@ResourceLock(AbstractChainIT.CHAIN)
@Order(5) // the lanes' order: junit-platform.properties
class ChainIT extends AbstractChainIT {

    @BeforeAll
    @Timeout(value = 5, unit = TimeUnit.MINUTES, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
    static void startPlainChain() {
        startChain("", Map.of());
    }
}
