package dev.grpcops.chain;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatCode;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

import dev.grpcops.proto.chain.v1.CheckRequest;
import dev.grpcops.proto.chain.v1.CheckoutRequest;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import java.util.Collections;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

class ChainInputTests {

    @ParameterizedTest(name = "sku \"{0}\" delay {1} -> {2}")
    @CsvSource(
            delimiter = '|',
            value = {
                "a            | 0     | ",
                "sku-1        | 60000 | ",
                "''           | 0     | sku: must be 1-128 characters, got 0",
                "a\tb         | 0     | sku: must not contain control characters",
                "a            | -1    | delay_ms: must be 0-60000, got -1",
                "a            | 60001 | delay_ms: must be 0-60000, got 60001",
            })
    void checkRequestRules(String sku, int delayMs, String problem) {
        CheckRequest request = CheckRequest.newBuilder()
                .setSku(sku.replace("\\t", "\t"))
                .setDelayMs(delayMs)
                .build();
        if (problem == null) {
            assertThatCode(() -> ChainInput.check(request)).doesNotThrowAnyException();
        } else {
            assertInvalid(() -> ChainInput.check(request), problem);
        }
    }

    @Test
    void skuLengthCountsCharactersNotBytes() {
        assertThatCode(() -> ChainInput.sku("sku", "é".repeat(128)))
                .as("128 characters, 256 bytes")
                .doesNotThrowAnyException();
        assertInvalid(() -> ChainInput.sku("sku", "x".repeat(129)), "sku: must be 1-128 characters, got 129");
        String emoji = "\uD83D\uDCE6"; // one character, two chars
        assertThatCode(() -> ChainInput.sku("sku", emoji.repeat(128)))
                .as("128 characters, 256 chars")
                .doesNotThrowAnyException();
        assertInvalid(() -> ChainInput.sku("sku", emoji.repeat(129)), "sku: must be 1-128 characters, got 129");
        assertInvalid(() -> ChainInput.sku("sku", "x" + emoji.repeat(128)), "sku: must be 1-128 characters, got 129");
    }

    @Test
    void aSkuTooLongIsRefusedForItsLengthBeforeItsCharacters() {
        assertInvalid(() -> ChainInput.sku("sku", "\t".repeat(129)), "sku: must be 1-128 characters, got 129");
        assertInvalid(() -> ChainInput.sku("sku", "\t".repeat(128)), "sku: must not contain control characters");
    }

    @Test
    void checkoutNamesTheIndexOfTheBadSku() {
        CheckoutRequest request =
                CheckoutRequest.newBuilder().addSkus("ok").addSkus("").build();
        assertInvalid(() -> ChainInput.check(request, 100), "skus[1]: must be 1-128 characters, got 0");

        CheckoutRequest badSlow = CheckoutRequest.newBuilder()
                .addSkus("ok")
                .addSlowSkus("a\u0000")
                .build();
        assertInvalid(() -> ChainInput.check(badSlow, 100), "slow_skus[0]: must not contain control characters");
    }

    @Test
    void checkoutNeedsOneToMaxSkus() {
        assertInvalid(
                () -> ChainInput.check(CheckoutRequest.getDefaultInstance(), 100),
                "skus: at least one SKU is required");
        CheckoutRequest tooMany = CheckoutRequest.newBuilder()
                .addAllSkus(Collections.nCopies(4, "a"))
                .build();
        assertInvalid(() -> ChainInput.check(tooMany, 3), "skus: 4 SKUs, at most 3 allowed");
    }

    private static void assertInvalid(Runnable check, String message) {
        StatusRuntimeException e = catchThrowableOfType(StatusRuntimeException.class, check::run);
        assertThat(e).as("expected INVALID_ARGUMENT").isNotNull();
        assertThat(e.getStatus().getCode()).isEqualTo(Status.Code.INVALID_ARGUMENT);
        assertThat(e.getStatus().getDescription()).isEqualTo(message);
    }
}
