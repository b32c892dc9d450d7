package dev.grpcops.admission;

import static org.assertj.core.api.Assertions.assertThat;

import java.net.InetSocketAddress;
import java.util.EnumMap;
import java.util.Map;
import org.junit.jupiter.api.Test;

class CallerPolicyTests {

    private static final InetSocketAddress PEER = new InetSocketAddress("10.1.2.3", 40000);

    static Map<Criticality, String> levelsByCriticality() {
        Map<Criticality, String> levels = new EnumMap<>(Criticality.class);
        for (Criticality criticality : Criticality.values()) {
            levels.put(criticality, criticality.value());
        }
        return levels;
    }

    private final CallerPolicy policy = CallerPolicy.builder()
            .criticalityLevels(levelsByCriticality())
            .callerLevel("nightly-export", "sheddable")
            .callerCap("mobile-app", Criticality.DEFAULT)
            .build();

    @Test
    void criticalityPicksTheLevelAndUnknownValuesMeanDefault() {
        assertThat(policy.levelOf(policy.classify("checkout", "critical", PEER)))
                .isEqualTo("critical");
        assertThat(policy.levelOf(policy.classify("checkout", "SHEDDABLE", PEER)))
                .isEqualTo("sheddable");
        assertThat(policy.levelOf(policy.classify("checkout", "urgent!!", PEER)))
                .isEqualTo("default");
        assertThat(policy.levelOf(policy.classify("checkout", null, PEER))).isEqualTo("default");
    }

    @Test
    void aCappedCallerClaimingCriticalIsTreatedAsDefaultButMayLowerItself() {
        Caller claimed = policy.classify("mobile-app", "critical", PEER);
        assertThat(claimed.criticality()).isEqualTo(Criticality.DEFAULT);
        assertThat(policy.levelOf(claimed)).isEqualTo("default");
        assertThat(policy.classify("mobile-app", "sheddable", PEER).criticality())
                .isEqualTo(Criticality.SHEDDABLE);
    }

    @Test
    void aMappedCallerGoesToItsLevelWhateverItClaims() {
        assertThat(policy.levelOf(policy.classify("nightly-export", "critical", PEER)))
                .isEqualTo("sheddable");
    }

    @Test
    void withoutACallerNameThePeerAddressIsTheFlow() {
        Caller anonymous = policy.classify(null, null, PEER);
        assertThat(anonymous.id()).isEqualTo("10.1.2.3");
        assertThat(anonymous.named()).isFalse();
        assertThat(policy.classify("  ", null, PEER).id()).isEqualTo("10.1.2.3");
    }
}
