package dev.grpcops.autoconfigure.admin;

import static org.assertj.core.api.Assertions.assertThat;

import dev.grpcops.admin.AdminListener;
import dev.grpcops.admin.internal.AdminAuthorizationInterceptor;
import io.grpc.Status;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import net.devh.boot.grpc.server.interceptor.GrpcGlobalServerInterceptor;
import org.junit.jupiter.api.Test;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.FilteredClassLoader;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;

class AdminAutoConfigurationTests {

    private final ApplicationContextRunner runner = new ApplicationContextRunner()
            .withConfiguration(AutoConfigurations.of(AdminAutoConfiguration.class));

    @Test
    void guardsAdminMethodsWithNoTokenByDefault() {
        runner.run(context -> {
            assertThat(context).hasSingleBean(AdminAuthorizationInterceptor.class);
            assertThat(context.getBean(AdminProperties.class).getToken()).isNull();
        });
    }

    @Test
    void tokenComesFromTheProperty() {
        runner.withPropertyValues("grpcops.admin.token=s3cret").run(context ->
                assertThat(context.getBean(AdminProperties.class).getToken()).isEqualTo("s3cret"));
    }

    @Test
    void countsAdminCallsInMicrometerOncePerMethodAndOutcome() {
        SimpleMeterRegistry registry = new SimpleMeterRegistry();
        runner.withBean(SimpleMeterRegistry.class, () -> registry).run(context -> {
            AdminListener listener = context.getBean(AdminListener.class);
            listener.completed("grpcops.v1.WhoAmI/Drain", Status.Code.OK);
            listener.completed("grpcops.v1.WhoAmI/Drain", Status.Code.OK);
            listener.completed("grpcops.v1.WhoAmI/Drain", Status.Code.PERMISSION_DENIED);
            assertThat(registry.get("grpcops.admin.calls").tag("outcome", "OK").counter().count()).isEqualTo(2);
            assertThat(registry.get("grpcops.admin.calls").tag("outcome", "PERMISSION_DENIED").counter().count())
                    .isEqualTo(1);
        });
    }

    @Test
    void backsOffWhenTheApplicationDefinesItsOwn() {
        AdminListener own = (method, outcome) -> { };
        runner.withBean(AdminListener.class, () -> own).run(context ->
                assertThat(context.getBean(AdminListener.class)).isSameAs(own));
    }

    @Test
    void needsTheServerStarter() {
        runner.withClassLoader(new FilteredClassLoader(GrpcGlobalServerInterceptor.class)).run(context ->
                assertThat(context).doesNotHaveBean(AdminAuthorizationInterceptor.class));
    }
}
