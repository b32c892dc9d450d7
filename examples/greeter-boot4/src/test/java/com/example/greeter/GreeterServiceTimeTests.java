package com.example.greeter;

import static org.assertj.core.api.Assertions.assertThat;

import com.example.greeter.v1.GreetReply;
import com.example.greeter.v1.GreetRequest;
import dev.grpcops.budget.Budget;
import dev.grpcops.budget.BudgetRules;
import dev.grpcops.testing.FakeClock;
import io.grpc.Context;
import io.grpc.Deadline;
import io.grpc.stub.StreamObserver;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The service's own code on the library's time (grpcops-testing's {@link FakeClock}): a budget made
 * from a deadline on the test's clock runs down only as the test moves the clock, so what the
 * service reads from it is exact, on any machine, without a server or a sleep.
 */
class GreeterServiceTimeTests {

    @RegisterExtension
    final FakeClock clock = new FakeClock();

    private final GreeterService service = new GreeterService();

    @Test
    void theGreetingShowsWhatIsLeftOfTheCallersDeadline() {
        Budget budget = Budget.arrived(Deadline.after(800, TimeUnit.MILLISECONDS, clock.ticker()), BudgetRules.DEFAULTS);
        clock.forward(Duration.ofMillis(300));

        GreetReply reply = greet(budget, "Ada");

        assertThat(reply.getMessage()).isEqualTo("Hello, Ada");
        assertThat(reply.getBudgetRemainingMs()).isEqualTo(500);
        assertThat(reply.getDownstreamDeadlineMs())
                .as("what is left, less the reserve the hop keeps to answer")
                .isEqualTo(500 - BudgetRules.DEFAULTS.reserve().toMillis());
        assertThat(reply.getDefaultBudget()).isFalse();
    }

    @Test
    void aBudgetSpentBeforeTheCallIsServedLeavesNothingDownstream() {
        Budget budget = Budget.arrived(Deadline.after(800, TimeUnit.MILLISECONDS, clock.ticker()), BudgetRules.DEFAULTS);
        clock.forward(Duration.ofMillis(790));

        GreetReply reply = greet(budget, "Ada");

        assertThat(reply.getBudgetRemainingMs()).isEqualTo(10);
        assertThat(reply.getDownstreamDeadlineMs()).as("below the reserve: none").isZero();
    }

    private GreetReply greet(Budget budget, String name) {
        List<GreetReply> replies = new ArrayList<>();
        budget.attachTo(Context.current())
                .run(() -> service.greet(GreetRequest.newBuilder().setName(name).build(), new StreamObserver<>() {
                    @Override
                    public void onNext(GreetReply reply) {
                        replies.add(reply);
                    }

                    @Override
                    public void onError(Throwable t) {
                        throw new AssertionError(t);
                    }

                    @Override
                    public void onCompleted() {}
                }));
        assertThat(replies).hasSize(1);
        return replies.get(0);
    }
}
