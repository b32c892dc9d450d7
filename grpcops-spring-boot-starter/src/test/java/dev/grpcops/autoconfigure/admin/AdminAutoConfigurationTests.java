package dev.grpcops.autoconfigure.admin;

import static org.assertj.core.api.Assertions.assertThat;

import dev.grpcops.admin.AdminListener;
import dev.grpcops.admin.AdminRateLimit;
import dev.grpcops.admin.AdminTokens;
import dev.grpcops.spring.admin.AdminProperties;
import dev.grpcops.spring.admin.UnusableAdminTokenFailureAnalyzer;
import io.grpc.Status;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Duration;
import net.devh.boot.grpc.server.interceptor.GrpcGlobalServerInterceptor;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.diagnostics.FailureAnalysis;
import org.springframework.boot.test.context.FilteredClassLoader;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;

class AdminAutoConfigurationTests {

    private final ApplicationContextRunner runner =
            new ApplicationContextRunner().withConfiguration(AutoConfigurations.of(AdminAutoConfiguration.class));

    @Test
    void guardsAdminMethodsWithNoTokenByDefault() {
        runner.run(context -> {
            assertThat(context).hasBean("grpcopsAdminAuthorizationInterceptor");
            assertThat(context.getBean(AdminProperties.class).getToken()).isNull();
        });
    }

    @Test
    void tokenComesFromTheProperty() {
        runner.withPropertyValues("grpcops.admin.token=s3cret-admin-token")
                .run(context -> assertThat(
                                context.getBean(AdminProperties.class).getToken())
                        .isEqualTo("s3cret-admin-token"));
    }

    @ParameterizedTest
    @ValueSource(strings = {"replace-me-before-deploying", "Dev-Only-Change-Me", "changeme", "PASSWORD"})
    void aPlaceholderTokenStopsTheStartNamingThePropertyAndHowToSetOne(String token) {
        runner.withPropertyValues("grpcops.admin.token=" + token).run(context -> {
            assertThat(context).hasFailed();
            assertThat(context.getStartupFailure())
                    .rootCause()
                    .isInstanceOf(AdminTokens.UnusableAdminTokenException.class)
                    .hasMessageContaining("grpcops.admin.token")
                    .hasMessageContaining("GRPCOPS_ADMIN_TOKEN")
                    .hasMessageContaining("known placeholder")
                    .hasMessageContaining("openssl rand -hex 32");
        });
    }

    @Test
    void aShortTokenStopsTheStartWithoutItsValueInTheReport() {
        runner.withPropertyValues("grpcops.admin.token=s3cret").run(context -> {
            assertThat(context).hasFailed();
            assertThat(context.getStartupFailure())
                    .rootCause()
                    .hasMessageContaining("grpcops.admin.token (env GRPCOPS_ADMIN_TOKEN) has 6 characters")
                    .hasMessageNotContaining("s3cret");
            FailureAnalysis analysis = new UnusableAdminTokenFailureAnalyzer().analyze(context.getStartupFailure());
            assertThat(analysis.getDescription())
                    .contains("grpcops.admin.token")
                    .doesNotContain("s3cret");
            assertThat(analysis.getAction()).contains("openssl rand -hex 32", "grpcops-admin");
        });
    }

    @Test
    void aBlankTokenStartsWithAdminOperationsDisabled() {
        runner.withPropertyValues("grpcops.admin.token= ")
                .run(context -> assertThat(context).hasNotFailed().hasBean("grpcopsAdminAuthorizationInterceptor"));
    }

    @Test
    void theRateLimitComesFromTypedProperties() {
        assertThat(new AdminProperties().toRateLimit()).isEqualTo(AdminRateLimit.DEFAULTS);
        runner.withPropertyValues(
                        "grpcops.admin.rate-limit.max-failures=3",
                        "grpcops.admin.rate-limit.window=30s",
                        "grpcops.admin.rate-limit.max-peers=100",
                        "grpcops.admin.refusal-log-interval=1m")
                .run(context -> assertThat(
                                context.getBean(AdminProperties.class).toRateLimit())
                        .isEqualTo(AdminRateLimit.builder()
                                .maxFailures(3)
                                .window(Duration.ofSeconds(30))
                                .maxPeers(100)
                                .logInterval(Duration.ofMinutes(1))
                                .build()));
    }

    @ParameterizedTest
    @ValueSource(
            strings = {
                "grpcops.admin.rate-limit.max-failures=0",
                "grpcops.admin.rate-limit.window=0s",
                "grpcops.admin.rate-limit.max-peers=-1",
                "grpcops.admin.refusal-log-interval=-1s"
            })
    void anInvalidRateLimitStopsTheStartNamingTheProperty(String property) {
        runner.withPropertyValues(property).run(context -> {
            assertThat(context).hasFailed();
            assertThat(context.getStartupFailure())
                    .rootCause()
                    .hasMessageContaining(property.substring(0, property.indexOf('=')));
        });
    }

    @Test
    void countsAdminCallsInMicrometerOncePerMethodAndOutcome() {
        SimpleMeterRegistry registry = new SimpleMeterRegistry();
        runner.withBean(SimpleMeterRegistry.class, () -> registry).run(context -> {
            AdminListener listener = context.getBean(AdminListener.class);
            listener.completed("grpcops.v1.WhoAmI/Drain", Status.Code.OK);
            listener.completed("grpcops.v1.WhoAmI/Drain", Status.Code.OK);
            listener.completed("grpcops.v1.WhoAmI/Drain", Status.Code.PERMISSION_DENIED);
            assertThat(registry.get("grpcops.admin.calls")
                            .tag("outcome", "OK")
                            .counter()
                            .count())
                    .isEqualTo(2);
            assertThat(registry.get("grpcops.admin.calls")
                            .tag("outcome", "PERMISSION_DENIED")
                            .counter()
                            .count())
                    .isEqualTo(1);
        });
    }

    @Test
    void backsOffWhenTheApplicationDefinesItsOwn() {
        AdminListener own = (method, outcome) -> {};
        runner.withBean(AdminListener.class, () -> own)
                .run(context -> assertThat(context.getBean(AdminListener.class)).isSameAs(own));
    }

    @Test
    void needsTheServerStarter() {
        runner.withClassLoader(new FilteredClassLoader(GrpcGlobalServerInterceptor.class))
                .run(context -> assertThat(context).doesNotHaveBean("grpcopsAdminAuthorizationInterceptor"));
    }
}
