package dev.grpcops.cli;

import io.grpc.ManagedChannel;
import io.grpc.ManagedChannelBuilder;
import io.grpc.StatusRuntimeException;
import io.grpc.health.v1.HealthCheckRequest;
import io.grpc.health.v1.HealthCheckResponse.ServingStatus;
import io.grpc.health.v1.HealthGrpc;
import java.time.Duration;
import java.util.concurrent.TimeUnit;

/**
 * One standard health Check, as kubelet's grpc probe makes it: what {@code grpcops probe} runs.
 */
public final class HealthProbe {

    private HealthProbe() {}

    /** What one Check found: SERVING or not, and what to print. */
    public record Result(boolean serving, String message) {}

    /** Checks {@code service} ("" for the process) at the gRPC {@code target}, plaintext. */
    public static Result probe(String target, String service, Duration timeout) {
        ManagedChannel channel =
                ManagedChannelBuilder.forTarget(target).usePlaintext().build();
        try {
            ServingStatus status = HealthGrpc.newBlockingStub(channel)
                    .withDeadlineAfter(timeout.toMillis(), TimeUnit.MILLISECONDS)
                    .check(HealthCheckRequest.newBuilder().setService(service).build())
                    .getStatus();
            return new Result(status == ServingStatus.SERVING, status.name());
        } catch (StatusRuntimeException e) {
            return new Result(
                    false,
                    "error: " + e.getStatus().getCode()
                            + (e.getStatus().getDescription() == null
                                    ? ""
                                    : ": " + e.getStatus().getDescription()));
        } finally {
            channel.shutdownNow();
        }
    }
}
