package dev.grpcops.autoconfigure.errors;

import net.devh.boot.grpc.server.advice.GrpcAdvice;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnProperty;
import org.springframework.context.annotation.Bean;

/**
 * Status exceptions thrown by handlers become their status ({@link StatusExceptionAdvice}). Switch
 * off with {@code grpcops.errors.status-advice=false} when the application maps these exceptions
 * in a {@code @GrpcAdvice} of its own (two handlers for one exception type are refused at start).
 */
@AutoConfiguration(beforeName = "net.devh.boot.grpc.server.autoconfigure.GrpcAdviceAutoConfiguration")
@ConditionalOnClass(GrpcAdvice.class)
@ConditionalOnProperty(prefix = "grpcops.errors", name = "status-advice", matchIfMissing = true)
public class ErrorsAutoConfiguration {

    @Bean
    StatusExceptionAdvice grpcopsStatusExceptionAdvice() {
        return new StatusExceptionAdvice();
    }
}
