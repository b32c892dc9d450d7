package dev.grpcops.autoconfigure.errors;

import static org.assertj.core.api.Assertions.assertThat;

import io.grpc.Status;
import org.junit.jupiter.api.Test;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;

class ErrorsAutoConfigurationTests {

    private final ApplicationContextRunner runner =
            new ApplicationContextRunner().withConfiguration(AutoConfigurations.of(ErrorsAutoConfiguration.class));

    @Test
    void statusExceptionsThrownByHandlersBecomeTheirStatus() {
        runner.run(context -> {
            StatusExceptionAdvice advice = context.getBean(StatusExceptionAdvice.class);
            Status invalid = Status.INVALID_ARGUMENT.withDescription("skus[1]: must be 1-128 characters, got 0");
            assertThat(advice.statusRuntimeException(invalid.asRuntimeException()))
                    .isSameAs(invalid);
            assertThat(advice.statusException(invalid.asException())).isSameAs(invalid);
        });
    }

    @Test
    void canBeSwitchedOffForAnAdviceOfTheApplicationsOwn() {
        runner.withPropertyValues("grpcops.errors.status-advice=false")
                .run(context -> assertThat(context).doesNotHaveBean(StatusExceptionAdvice.class));
    }
}
