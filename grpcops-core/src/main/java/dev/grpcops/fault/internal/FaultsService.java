package dev.grpcops.fault.internal;

import dev.grpcops.fault.FaultInjection;
import dev.grpcops.fault.Faults;
import dev.grpcops.fault.InvalidFaultException;
import dev.grpcops.proto.fault.v1.FaultSpec;
import dev.grpcops.proto.fault.v1.FaultState;
import dev.grpcops.proto.fault.v1.FaultsGrpc;
import dev.grpcops.proto.fault.v1.GetFaultsRequest;
import io.grpc.Status;
import io.grpc.stub.StreamObserver;
import java.time.Duration;
import java.util.Map;

/** {@code grpcops.v1.Faults}: what this replica injects, and (admin) what it should. */
public final class FaultsService extends FaultsGrpc.FaultsImplBase {

    /** The contract's field of each setting, for INVALID_ARGUMENT. */
    private static final Map<String, String> FIELDS = Map.of(
            "delay", "delay_ms", "stall", "stall_ms", "stall-every", "stall_every_ms", "error-ratio", "error_ratio");

    private final FaultInjection injection;
    private final String replica;

    public FaultsService(FaultInjection injection, String replica) {
        this.injection = injection;
        this.replica = replica;
    }

    @Override
    public void set(FaultSpec request, StreamObserver<FaultState> responses) {
        Faults faults;
        try {
            faults = new Faults(
                    Duration.ofMillis(request.getDelayMs()),
                    Duration.ofMillis(request.getStallMs()),
                    Duration.ofMillis(request.getStallEveryMs()),
                    request.getErrorRatio());
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
        injection.set(faults);
        answer(responses);
    }

    @Override
    public void get(GetFaultsRequest request, StreamObserver<FaultState> responses) {
        answer(responses);
    }

    private void answer(StreamObserver<FaultState> responses) {
        Faults faults = injection.current();
        responses.onNext(FaultState.newBuilder()
                .setReplica(replica)
                .setFaults(FaultSpec.newBuilder()
                        .setDelayMs(faults.delay().toMillis())
                        .setStallMs(faults.stall().toMillis())
                        .setStallEveryMs(faults.stallEvery().toMillis())
                        .setErrorRatio(faults.errorRatio()))
                .build());
        responses.onCompleted();
    }
}
