package dev.grpcops.lifecycle;

import io.grpc.ManagedChannel;
import io.grpc.ManagedChannelBuilder;
import io.grpc.StatusRuntimeException;
import io.grpc.health.v1.HealthCheckRequest;
import io.grpc.health.v1.HealthCheckResponse.ServingStatus;
import io.grpc.health.v1.HealthGrpc;
import java.time.Duration;
import java.util.concurrent.TimeUnit;

/**
 * One standard health Check, as kubelet's grpc probe makes it: for container healthchecks, which
 * run it from the service's own jar ({@code java -cp app.jar dev.grpcops.lifecycle.HealthProbe
 * 127.0.0.1:50061 chain.v1.Stock}). Exits 0 if SERVING, 1 otherwise, printing why.
 */
public final class HealthProbe {

    private HealthProbe() {
    }

    /** What one Check found: SERVING or not, and what to print. */
    public record Result(boolean serving, String message) {
    }

    public static void main(String[] args) {
        if (args.length < 1 || args.length > 3) {
            System.err.println("usage: HealthProbe HOST:PORT [SERVICE] [TIMEOUT_MS]");
            System.exit(2);
        }
        Duration timeout = Duration.ofMillis(args.length > 2 ? Long.parseLong(args[2]) : 1000);
        Result result = probe(args[0], args.length > 1 ? args[1] : "", timeout);
        (result.serving() ? System.out : System.err).println(result.message());
        System.exit(result.serving() ? 0 : 1);
    }

    /** Checks {@code service} ("" for the process) at the gRPC {@code target}, plaintext. */
    public static Result probe(String target, String service, Duration timeout) {
        ManagedChannel channel = ManagedChannelBuilder.forTarget(target).usePlaintext().build();
        try {
            ServingStatus status = HealthGrpc.newBlockingStub(channel)
                    .withDeadlineAfter(timeout.toMillis(), TimeUnit.MILLISECONDS)
                    .check(HealthCheckRequest.newBuilder().setService(service).build())
                    .getStatus();
            return new Result(status == ServingStatus.SERVING, status.name());
        } catch (StatusRuntimeException e) {
            return new Result(false, "error: " + e.getStatus().getCode()
                    + (e.getStatus().getDescription() == null ? "" : ": " + e.getStatus().getDescription()));
        } finally {
            channel.shutdownNow();
        }
    }
}
