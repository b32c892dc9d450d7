package com.example.plaingreeter;

import com.example.plaingreeter.v1.GreetReply;
import com.example.plaingreeter.v1.GreetRequest;
import com.example.plaingreeter.v1.GreeterGrpc;
import dev.grpcops.budget.Budget;
import io.grpc.Status;
import io.grpc.stub.StreamObserver;

/** An ordinary gRPC service; it reads the call's budget only to show it. */
final class GreeterService extends GreeterGrpc.GreeterImplBase {

    @Override
    public void greet(GreetRequest request, StreamObserver<GreetReply> responses) {
        if (request.getName().isBlank()) {
            responses.onError(Status.INVALID_ARGUMENT.withDescription("name: required").asRuntimeException());
            return;
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
