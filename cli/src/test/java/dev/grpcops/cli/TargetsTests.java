package dev.grpcops.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;

import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

class TargetsTests {

    @ParameterizedTest(name = "{0} -> {1}")
    @CsvSource({
        "127.0.0.1:50051,                                 127.0.0.1:50051",
        "dns:///whoami-headless.grpcops:50051,            dns:///whoami-headless.grpcops:50051",
        "'127.0.0.2:50051,127.0.0.3:50051',               'list:///127.0.0.2:50051,127.0.0.3:50051'",
    })
    void targetsBecomeGrpcNames(String target, String grpcTarget) {
        assertThat(Targets.grpcTarget(target)).isEqualTo(grpcTarget);
    }

    @Test
    void aListOfNonAddressesIsRefused() {
        assertThatIllegalArgumentException()
                .isThrownBy(() -> Targets.grpcTarget("a:1,b"))
                .withMessage("'b' is not host:port");
        assertThatIllegalArgumentException()
                .isThrownBy(() -> Targets.grpcTarget("a:1,b:x"))
                .withMessage("'b:x' is not host:port");
    }

    @ParameterizedTest(name = "{0}")
    @CsvSource({"250ms, 250", "3s, 3000", "1m, 60000"})
    void durationsAsPeopleTypeThem(String text, long millis) {
        assertThat(Durations.parse(text)).isEqualTo(Duration.ofMillis(millis));
    }

    @Test
    void nonsenseDurationIsRefused() {
        assertThatIllegalArgumentException()
                .isThrownBy(() -> Durations.parse("3 seconds"))
                .withMessageContaining("like 250ms, 3s or 1m");
    }
}
