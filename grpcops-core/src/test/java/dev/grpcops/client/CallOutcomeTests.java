package dev.grpcops.client;

import static org.assertj.core.api.Assertions.assertThat;

import io.grpc.Metadata;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/** Which ends of a call say the replica is broken, and which decide a hedged call. */
class CallOutcomeTests {

    @ParameterizedTest(name = "{0}, relayed {1}: {2}")
    @CsvSource({
        "OK,                  false, ANSWERED,          false, true",
        "NOT_FOUND,           false, APPLICATION_ERROR, false, true",
        "INVALID_ARGUMENT,    false, APPLICATION_ERROR, false, true",
        "FAILED_PRECONDITION, false, APPLICATION_ERROR, false, true",
        "PERMISSION_DENIED,   false, APPLICATION_ERROR, false, true",
        "UNAVAILABLE,         false, REPLICA_FAILURE,   true,  false",
        "INTERNAL,            false, REPLICA_FAILURE,   true,  false",
        "UNKNOWN,             false, REPLICA_FAILURE,   true,  false",
        "DATA_LOSS,           false, REPLICA_FAILURE,   true,  false",
        "UNAVAILABLE,         true,  RELAYED,           false, false",
        "INTERNAL,            true,  RELAYED,           false, false",
        "RESOURCE_EXHAUSTED,  false, OVERLOAD,          false, false",
        "RESOURCE_EXHAUSTED,  true,  OVERLOAD,          false, false",
        "CANCELLED,           false, CANCELLED,         false, false",
        "DEADLINE_EXCEEDED,   false, DEADLINE,          false, false",
    })
    void whatAStatusSays(
            Status.Code code, boolean relayed, CallOutcome expected, boolean replicaFailure, boolean definitive) {
        Metadata trailers = new Metadata();
        if (relayed) {
            trailers.put(CallOutcome.RELAYED_KEY, "1");
        }
        CallOutcome outcome = CallOutcome.of(Status.fromCode(code), trailers);
        assertThat(outcome).isEqualTo(expected);
        assertThat(outcome.replicaFailure()).isEqualTo(replicaFailure);
        assertThat(outcome.definitive()).isEqualTo(definitive);
        assertThat(CallOutcome.of(Status.fromCode(code).asRuntimeException(trailers)))
                .isEqualTo(expected);
    }

    @ParameterizedTest
    @CsvSource({"UNAVAILABLE", "INTERNAL", "RESOURCE_EXHAUSTED", "DEADLINE_EXCEEDED"})
    void aRelayedFailureKeepsItsCodeAndDescriptionAndSaysItIsRelayed(Status.Code code) {
        StatusRuntimeException downstream =
                Status.fromCode(code).withDescription("stock said so").asRuntimeException();
        StatusRuntimeException relayed = CallOutcome.relay(downstream);
        assertThat(relayed.getStatus().getCode()).isEqualTo(code);
        assertThat(relayed.getStatus().getDescription()).isEqualTo("stock said so");
        assertThat(relayed.getTrailers().containsKey(CallOutcome.RELAYED_KEY)).isTrue();
    }

    @Test
    void aRelayedFailureTakesNoStackTrace() {
        StatusRuntimeException relayed = CallOutcome.relay(Status.UNAVAILABLE.asRuntimeException());
        assertThat(relayed.getStackTrace()).isEmpty();
        assertThat(Status.fromThrowable(relayed).getCode()).isEqualTo(Status.Code.UNAVAILABLE);
    }
}
