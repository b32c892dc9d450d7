package dev.grpcops.autoconfigure.errors;

import io.grpc.Status;
import io.grpc.StatusException;
import io.grpc.StatusRuntimeException;
import net.devh.boot.grpc.server.advice.GrpcAdvice;
import net.devh.boot.grpc.server.advice.GrpcExceptionHandler;

/**
 * A handler that throws a gRPC status (an input check's {@code INVALID_ARGUMENT} naming the field,
 * say) ends its call with exactly that status, instead of gRPC's {@code UNKNOWN "Application error
 * processing RPC"} and a stack trace in the log. Handlers validate with one line and no try/catch.
 * (Public: net.devh invokes the handler methods reflectively.)
 */
@GrpcAdvice
public final class StatusExceptionAdvice {

    @GrpcExceptionHandler
    public Status statusRuntimeException(StatusRuntimeException e) {
        return e.getStatus();
    }

    @GrpcExceptionHandler
    public Status statusException(StatusException e) {
        return e.getStatus();
    }
}
