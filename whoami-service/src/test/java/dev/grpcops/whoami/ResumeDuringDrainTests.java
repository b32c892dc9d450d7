package dev.grpcops.whoami;

import static org.assertj.core.api.Assertions.assertThat;

import dev.grpcops.admin.AdminCredentials;
import dev.grpcops.proto.whoami.v1.DrainRequest;
import dev.grpcops.proto.whoami.v1.WhoAmIGrpc;
import io.grpc.health.v1.HealthCheckRequest;
import io.grpc.health.v1.HealthCheckResponse.ServingStatus;
import io.grpc.health.v1.HealthGrpc;
import io.grpc.protobuf.services.HealthStatusManager;
import java.util.concurrent.TimeUnit;
import net.devh.boot.grpc.client.inject.GrpcClient;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.test.annotation.DirtiesContext;

/**
 * Resume during the shutdown drain: health has entered its terminal state (every name
 * NOT_SERVING, later changes ignored), so Resume must not claim SERVING. Its own context (its
 * health ends terminal), closed after the class.
 */
@SpringBootTest(
        properties = {
            "grpc.server.in-process-name=whoami-resume-during-drain",
            "grpc.server.port=-1",
            "grpc.client.whoami.address=in-process:whoami-resume-during-drain",
            "management.server.port=-1",
            "POD_NAME=w9",
            "grpcops.admin.token=resume-during-drain-token",
            "grpcops.shutdown.drain-delay=0s",
        })
@DirtiesContext
@Timeout(value = 1, unit = TimeUnit.MINUTES)
class ResumeDuringDrainTests {

    private static final String TOKEN = "resume-during-drain-token";

    @Autowired
    private HealthStatusManager healthStatus;

    @GrpcClient("whoami")
    private WhoAmIGrpc.WhoAmIBlockingStub whoami;

    @GrpcClient("whoami")
    private HealthGrpc.HealthBlockingStub health;

    @Test
    void resumeAndDrainAnswerWhatHealthReportsOnceTheShutdownDrainHasBegun() {
        assertThat(admin().drain(DrainRequest.getDefaultInstance()).getStatus()).isEqualTo("NOT_SERVING");
        assertThat(admin().resume(DrainRequest.getDefaultInstance()).getStatus())
                .as("before the drain")
                .isEqualTo("SERVING");

        healthStatus.enterTerminalState(); // what drain-before-stop does on SIGTERM

        var resumed = admin().resume(DrainRequest.getDefaultInstance());
        assertThat(resumed.getPod()).isEqualTo("w9");
        assertThat(resumed.getStatus()).isEqualTo("NOT_SERVING");
        assertThat(check(WhoAmIService.SERVICE)).as("what probes see").isEqualTo(ServingStatus.NOT_SERVING);
        assertThat(admin().drain(DrainRequest.getDefaultInstance()).getStatus()).isEqualTo("NOT_SERVING");
    }

    private ServingStatus check(String service) {
        return health.withDeadlineAfter(5, TimeUnit.SECONDS)
                .check(HealthCheckRequest.newBuilder().setService(service).build())
                .getStatus();
    }

    private WhoAmIGrpc.WhoAmIBlockingStub admin() {
        return whoami.withInterceptors(AdminCredentials.bearer(TOKEN)).withDeadlineAfter(5, TimeUnit.SECONDS);
    }
}
