package dev.grpcops.autoconfigure.server;

import static org.assertj.core.api.Assertions.assertThat;

import io.grpc.ServerInterceptor;
import java.util.List;
import net.devh.boot.grpc.server.autoconfigure.GrpcServerAutoConfiguration;
import net.devh.boot.grpc.server.interceptor.GlobalServerInterceptorRegistry;
import net.devh.boot.grpc.server.interceptor.GrpcGlobalServerInterceptor;
import net.devh.boot.grpc.server.scope.GrpcRequestScope;
import org.junit.jupiter.api.Test;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.annotation.AnnotationConfigApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.context.annotation.Scope;

class UnusedRequestScopeTests {

    private final ApplicationContextRunner runner = new ApplicationContextRunner()
            .withConfiguration(
                    AutoConfigurations.of(GrpcServerAutoConfiguration.class, ServerLimitsAutoConfiguration.class))
            .withUserConfiguration(OwnInterceptor.class);

    @Test
    void withNoBeanInTheRequestScopeItsInterceptorIsNotInFrontOfEveryCall() {
        runner.run(context -> {
            List<ServerInterceptor> interceptors =
                    context.getBean(GlobalServerInterceptorRegistry.class).getServerInterceptors();
            assertThat(interceptors).noneMatch(GrpcRequestScope.class::isInstance);
            assertThat(interceptors).contains(context.getBean("ownInterceptor", ServerInterceptor.class));
        });
    }

    @Test
    void aBeanInTheRequestScopeKeepsIt() {
        runner.withUserConfiguration(RequestScoped.class).run(context -> {
            List<ServerInterceptor> interceptors =
                    context.getBean(GlobalServerInterceptorRegistry.class).getServerInterceptors();
            assertThat(interceptors).anyMatch(GrpcRequestScope.class::isInstance);
            assertThat(interceptors).contains(context.getBean("ownInterceptor", ServerInterceptor.class));
        });
    }

    @Test
    void aBeanInTheRequestScopeOfAParentContextKeepsIt() {
        try (AnnotationConfigApplicationContext parent = new AnnotationConfigApplicationContext(RequestScoped.class)) {
            runner.withParent(parent)
                    .run(context -> assertThat(context.getBean(GlobalServerInterceptorRegistry.class)
                                    .getServerInterceptors())
                            .anyMatch(GrpcRequestScope.class::isInstance));
        }
    }

    @Configuration(proxyBeanMethods = false)
    static class OwnInterceptor {

        @Bean
        @GrpcGlobalServerInterceptor
        ServerInterceptor ownInterceptor() {
            return new ServerInterceptor() {
                @Override
                public <ReqT, RespT> io.grpc.ServerCall.Listener<ReqT> interceptCall(
                        io.grpc.ServerCall<ReqT, RespT> call,
                        io.grpc.Metadata headers,
                        io.grpc.ServerCallHandler<ReqT, RespT> next) {
                    return next.startCall(call, headers);
                }
            };
        }
    }

    @Configuration(proxyBeanMethods = false)
    static class RequestScoped {

        @Bean
        @Scope(GrpcRequestScope.GRPC_REQUEST_SCOPE_NAME)
        StringBuilder perCall() {
            return new StringBuilder();
        }
    }
}
