package com.example.greeter;

import com.example.greeter.v1.GreetReply;
import com.example.greeter.v1.GreetRequest;
import com.example.greeter.v1.GreeterGrpc;
import dev.grpcops.budget.Budget;
import io.grpc.Status;
import io.grpc.stub.StreamObserver;
import org.springframework.grpc.server.service.GrpcService;

/**
 * An ordinary gRPC service. It reads the call's budget to show it; it need not: the starter holds
 * every downstream call it makes to that budget, admits the call fairly and drains it before stop.
 */
@GrpcService
public class GreeterService extends GreeterGrpc.GreeterImplBase {

    @Override
    public void greet(GreetRequest request, StreamObserver<GreetReply> responses) {
        if (request.getName().isBlank()) {
            // Spring gRPC ends the call with this status, not UNKNOWN and a stack trace.
            throw Status.INVALID_ARGUMENT.withDescription("name: required").asRuntimeException();
        }
        GreetReply.Builder reply = GreetReply.newBuilder().setMessage("Hello, " + request.getName());
        Budget.current().ifPresent(budget -> reply
                .setBudgetRemainingMs(budget.remaining().toMillis())
                .setDownstreamDeadlineMs(Math.max(0, budget.downstream().toMillis()))
                .setDefaultBudget(budget.defaulted()));
        responses.onNext(reply.build());
        responses.onCompleted();
    }
}
