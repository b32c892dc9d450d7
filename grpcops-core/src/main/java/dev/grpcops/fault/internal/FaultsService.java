package dev.grpcops.fault.internal;

import dev.grpcops.fault.Faults;
import dev.grpcops.fault.InvalidFaultException;
import dev.grpcops.proto.fault.v1.FaultSpec;
import dev.grpcops.proto.fault.v1.FaultState;
import dev.grpcops.proto.fault.v1.FaultsGrpc;
import dev.grpcops.proto.fault.v1.GetFaultsRequest;
import io.grpc.Status;
import io.grpc.stub.StreamObserver;
import java.time.Duration;
import java.util.Locale;
import java.util.Map;
import java.util.function.Consumer;
import java.util.function.Supplier;

/** {@code grpcops.v1.Faults}: what this replica injects, and (admin) what it should. */
public final class FaultsService extends FaultsGrpc.FaultsImplBase {

    /** The contract's field of each setting, for INVALID_ARGUMENT. */
    private static final Map<String, String> FIELDS = Map.of(
            "delay",
            "delay_ms",
            "stall",
            "stall_ms",
            "stall-every",
            "stall_every_ms",
            "error-ratio",
            "error_ratio",
            "error-code",
            "error_code",
            "work",
            "work_ms");

    private final Supplier<Faults> current;
    private final Consumer<Faults> set;
    private final String replica;

    /**
     * @param current what is injected now
     * @param set replaces it
     */
    public FaultsService(Supplier<Faults> current, Consumer<Faults> set, String replica) {
        this.current = current;
        this.set = set;
        this.replica = replica;
    }

    @Override
    public void set(FaultSpec request, StreamObserver<FaultState> responses) {
        Faults faults;
        try {
            faults = Faults.builder()
                    .delay(Duration.ofMillis(request.getDelayMs()))
                    .stall(Duration.ofMillis(request.getStallMs()), Duration.ofMillis(request.getStallEveryMs()))
                    .errorRatio(request.getErrorRatio())
                    .errorCode(errorCode(request.getErrorCode()))
                    .work(Duration.ofMillis(request.getWorkMs()))
                    .build();
        } catch (InvalidFaultException e) {
            String field = FIELDS.getOrDefault(e.field(), e.field());
            responses.onError(Status.INVALID_ARGUMENT
                    .withDescription(
                            field + ": " + e.getMessage().substring(e.field().length() + 1))
                    .asRuntimeException());
            return;
        } catch (ArithmeticException e) {
            responses.onError(Status.INVALID_ARGUMENT
                    .withDescription("a duration out of range: " + request)
                    .asRuntimeException());
            return;
        }
        set.accept(faults);
        answer(responses);
    }

    /** The contract's name of a code ({@code UNAVAILABLE} when empty); anything else is left to {@link Faults} to refuse. */
    private static Status.Code errorCode(String name) {
        if (name.isBlank()) {
            return Status.Code.UNAVAILABLE;
        }
        try {
            return Status.Code.valueOf(name.trim().toUpperCase(Locale.ROOT));
        } catch (IllegalArgumentException e) {
            throw new InvalidFaultException(
                    "error-code",
                    "must be one of UNAVAILABLE, INTERNAL, UNKNOWN, DATA_LOSS," + " RESOURCE_EXHAUSTED, got " + name);
        }
    }

    @Override
    public void get(GetFaultsRequest request, StreamObserver<FaultState> responses) {
        answer(responses);
    }

    private void answer(StreamObserver<FaultState> responses) {
        Faults faults = current.get();
        responses.onNext(FaultState.newBuilder()
                .setReplica(replica)
                .setFaults(FaultSpec.newBuilder()
                        .setDelayMs(faults.delay().toMillis())
                        .setStallMs(faults.stall().toMillis())
                        .setStallEveryMs(faults.stallEvery().toMillis())
                        .setErrorRatio(faults.errorRatio())
                        .setErrorCode(faults.errorCode().name())
                        .setWorkMs(faults.work().toMillis()))
                .build());
        responses.onCompleted();
    }
}
