package dev.grpcops.admin;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

import dev.grpcops.admin.internal.AdminAuthorizationInterceptor;
import dev.grpcops.proto.whoami.v1.DrainReply;
import dev.grpcops.proto.whoami.v1.DrainRequest;
import dev.grpcops.proto.whoami.v1.WhoAmIGrpc;
import dev.grpcops.proto.whoami.v1.WhoReply;
import dev.grpcops.proto.whoami.v1.WhoRequest;
import io.grpc.ManagedChannel;
import io.grpc.Metadata;
import io.grpc.Server;
import io.grpc.ServerInterceptors;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.inprocess.InProcessChannelBuilder;
import io.grpc.inprocess.InProcessServerBuilder;
import io.grpc.stub.MetadataUtils;
import io.grpc.stub.StreamObserver;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

@Timeout(value = 1, unit = TimeUnit.MINUTES)
class AdminAuthorizationTests {

    private final AtomicInteger drains = new AtomicInteger();
    /** Outcomes the listener was told, as "method outcome". */
    private final List<String> outcomes = new CopyOnWriteArrayList<>();

    private Server server;
    private ManagedChannel channel;

    @AfterEach
    void stop() throws InterruptedException {
        channel.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
        server.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
    }

    @Test
    void rightTokenIsLetThrough() throws Exception {
        start("s3cret-admin-token");
        assertThat(stub("Bearer s3cret-admin-token")
                        .drain(DrainRequest.getDefaultInstance())
                        .getStatus())
                .isEqualTo("NOT_SERVING");
        assertThat(drains).hasValue(1);
        assertThat(outcomes).containsExactly("grpcops.v1.WhoAmI/Drain OK");
    }

    @Test
    void schemeIsReadInAnyCaseWithWhitespaceAroundIt() throws Exception {
        start("s3cret-admin-token");
        for (String authorization : new String[] {
            "bearer s3cret-admin-token",
            "BEARER s3cret-admin-token",
            "  Bearer   s3cret-admin-token  ",
            "bEaReR\ts3cret-admin-token"
        }) {
            assertThat(stub(authorization)
                            .drain(DrainRequest.getDefaultInstance())
                            .getStatus())
                    .as(authorization)
                    .isEqualTo("NOT_SERVING");
        }
        assertThat(drains).hasValue(4);
    }

    @Test
    void missingCredentialsAreUnauthenticated() throws Exception {
        start("s3cret-admin-token");
        assertRefused(stub(null), Status.Code.UNAUTHENTICATED, "authorization: Bearer <token>");
        assertRefused(stub("Basic s3cret-admin-token"), Status.Code.UNAUTHENTICATED, "authorization: Bearer <token>");
    }

    @Test
    void wrongTokenIsPermissionDenied() throws Exception {
        start("s3cret-admin-token");
        assertRefused(stub("Bearer s3cre"), Status.Code.PERMISSION_DENIED, "admin token rejected");
        assertRefused(
                stub("Bearer s3cret-admin-token-and-more"), Status.Code.PERMISSION_DENIED, "admin token rejected");
        assertThat(outcomes).filteredOn(o -> o.endsWith("PERMISSION_DENIED")).hasSize(2);
    }

    @Test
    void noTokenConfiguredRefusesEveryAdminCallNamingWhereItIsSet() throws Exception {
        start(" ");
        assertRefused(
                stub("Bearer "), Status.Code.PERMISSION_DENIED, "admin operations are disabled: set the admin token");
        assertRefused(stub(null), Status.Code.PERMISSION_DENIED, "set the admin token");
    }

    @Test
    void aFrameworkNamesItsOwnSettingInThatRefusal() throws Exception {
        serve(AdminAuthorization.builder(List.of(AdminMethods.of(WhoAmIGrpc.getDrainMethod())))
                .tokenSource("grpcops.admin.token (env GRPCOPS_ADMIN_TOKEN)")
                .build());
        assertRefused(stub(null), Status.Code.PERMISSION_DENIED, "set grpcops.admin.token (env GRPCOPS_ADMIN_TOKEN)");
    }

    @Test
    void otherMethodsNeedNoToken() throws Exception {
        start(null);
        assertThat(stub(null).who(WhoRequest.getDefaultInstance()).getPod()).isEqualTo("p");
    }

    private void assertRefused(WhoAmIGrpc.WhoAmIBlockingStub stub, Status.Code code, String message) {
        StatusRuntimeException refused =
                catchThrowableOfType(StatusRuntimeException.class, () -> stub.drain(DrainRequest.getDefaultInstance()));
        assertThat(refused.getStatus().getCode()).isEqualTo(code);
        assertThat(refused.getStatus().getDescription()).contains(message);
        assertThat(drains).as("the admin method never ran").hasValue(0);
    }

    private WhoAmIGrpc.WhoAmIBlockingStub stub(String authorization) {
        WhoAmIGrpc.WhoAmIBlockingStub stub = WhoAmIGrpc.newBlockingStub(channel);
        if (authorization == null) {
            return stub;
        }
        Metadata headers = new Metadata();
        headers.put(AdminCredentials.AUTHORIZATION, authorization);
        return stub.withInterceptors(MetadataUtils.newAttachHeadersInterceptor(headers));
    }

    private void start(String token) throws Exception {
        serve(new AdminAuthorizationInterceptor(
                List.of(AdminMethods.of(WhoAmIGrpc.getDrainMethod(), WhoAmIGrpc.getResumeMethod())),
                token,
                (method, outcome) -> outcomes.add(method + " " + outcome)));
    }

    private void serve(io.grpc.ServerInterceptor interceptor) throws Exception {
        String name = InProcessServerBuilder.generateName();
        server = InProcessServerBuilder.forName(name)
                .directExecutor()
                .addService(ServerInterceptors.intercept(new CountingWhoAmI(), interceptor))
                .build()
                .start();
        channel = InProcessChannelBuilder.forName(name).directExecutor().build();
    }

    private final class CountingWhoAmI extends WhoAmIGrpc.WhoAmIImplBase {

        @Override
        public void who(WhoRequest request, StreamObserver<WhoReply> responses) {
            responses.onNext(WhoReply.newBuilder().setPod("p").build());
            responses.onCompleted();
        }

        @Override
        public void drain(DrainRequest request, StreamObserver<DrainReply> responses) {
            drains.incrementAndGet();
            responses.onNext(
                    DrainReply.newBuilder().setPod("p").setStatus("NOT_SERVING").build());
            responses.onCompleted();
        }
    }
}
