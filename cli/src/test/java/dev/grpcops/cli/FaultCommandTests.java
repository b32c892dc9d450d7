package dev.grpcops.cli;

import static org.assertj.core.api.Assertions.assertThat;

import com.google.gson.JsonObject;
import com.google.gson.JsonParser;
import dev.grpcops.admin.AdminAuthorization;
import dev.grpcops.fault.FaultInjection;
import dev.grpcops.fault.Faults;
import io.grpc.Server;
import io.grpc.ServerInterceptors;
import io.grpc.netty.shaded.io.grpc.netty.NettyServerBuilder;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** {@code grpcops fault} against a real server with fault injection and admin authorization. */
@Timeout(60)
class FaultCommandTests {

    private static final String TOKEN = "0123456789abcdef0123456789abcdef";

    private FaultInjection faults;
    private Server server;
    private String target;
    /** Every call that reached the server, refused or not: what the CLI sent. */
    private final List<String> received = new java.util.concurrent.CopyOnWriteArrayList<>();

    @BeforeEach
    void start() throws Exception {
        faults = FaultInjection.builder().replica("stock-2").build();
        server = NettyServerBuilder.forAddress(new InetSocketAddress("127.0.0.1", 0))
                .addService(ServerInterceptors.intercept(
                        faults.adminService(),
                        AdminAuthorization.builder(List.of(FaultInjection.adminMethods()))
                                .token(TOKEN)
                                .build(),
                        new io.grpc.ServerInterceptor() {
                            @Override
                            public <ReqT, RespT> io.grpc.ServerCall.Listener<ReqT> interceptCall(
                                    io.grpc.ServerCall<ReqT, RespT> call,
                                    io.grpc.Metadata headers,
                                    io.grpc.ServerCallHandler<ReqT, RespT> next) {
                                received.add(call.getMethodDescriptor().getBareMethodName());
                                return next.startCall(call, headers);
                            }
                        }))
                .build()
                .start();
        target = "127.0.0.1:" + server.getPort();
    }

    @AfterEach
    void stop() throws InterruptedException {
        server.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
    }

    private CliRun run(Map<String, String> environment, String... args) {
        return CliRun.of(
                cli -> ((FaultCommand) cli.getSubcommands().get("fault").getCommand()).environment = environment, args);
    }

    @Test
    void setsShowsAndClearsWhatAReplicaInjects() {
        Map<String, String> env = Map.of("GRPCOPS_ADMIN_TOKEN", TOKEN);
        CliRun set = run(
                env,
                "fault",
                target,
                "--delay",
                "200ms",
                "--stall",
                "200ms/1s",
                "--work",
                "2ms",
                "--error-ratio",
                "0.5");
        assertThat(set.exit()).as(set.err()).isZero();
        JsonObject printed = JsonParser.parseString(set.out()).getAsJsonObject();
        assertThat(printed.get("replica").getAsString()).isEqualTo("stock-2");
        assertThat(printed.get("stall_every_ms").getAsLong()).isEqualTo(1000);
        assertThat(printed.get("work_ms").getAsLong()).isEqualTo(2);
        assertThat(faults.current())
                .isEqualTo(Faults.builder()
                        .delay(Duration.ofMillis(200))
                        .stall(Duration.ofMillis(200), Duration.ofSeconds(1))
                        .work(Duration.ofMillis(2))
                        .errorRatio(0.5)
                        .build());

        CliRun shown = run(Map.of(), "fault", target);
        assertThat(shown.exit()).isZero();
        assertThat(JsonParser.parseString(shown.out())
                        .getAsJsonObject()
                        .get("delay_ms")
                        .getAsLong())
                .isEqualTo(200);

        assertThat(run(env, "fault", target, "--clear").exit()).isZero();
        assertThat(faults.current()).isEqualTo(Faults.NONE);
    }

    @Test
    void aChangeWithoutTheTokenIsNotSent() {
        CliRun refused = run(Map.of(), "fault", target, "--delay", "200ms");
        assertThat(refused.exit()).isEqualTo(2);
        assertThat(refused.err()).contains("set GRPCOPS_ADMIN_TOKEN");
        assertThat(received).as("calls that reached the server").isEmpty();
        assertThat(faults.current()).isEqualTo(Faults.NONE);
    }

    @Test
    void anErrorCodeMakesTheReplicaBrokenRatherThanDown() {
        Map<String, String> env = Map.of("GRPCOPS_ADMIN_TOKEN", TOKEN);
        CliRun set = run(env, "fault", target, "--error-ratio", "0.5", "--error-code", "internal");
        assertThat(set.exit()).as(set.err()).isZero();
        assertThat(JsonParser.parseString(set.out())
                        .getAsJsonObject()
                        .get("error_code")
                        .getAsString())
                .isEqualTo("INTERNAL");
        assertThat(faults.current().errorCode()).isEqualTo(io.grpc.Status.Code.INTERNAL);

        CliRun wrong = run(env, "fault", target, "--error-ratio", "0.5", "--error-code", "NOT_FOUND");
        assertThat(wrong.exit()).isEqualTo(1);
        assertThat(wrong.err()).contains("INVALID_ARGUMENT", "error_code");
        CliRun alone = run(env, "fault", target, "--error-code", "INTERNAL");
        assertThat(alone.exit()).isEqualTo(2);
        assertThat(alone.err()).contains("--error-code goes with --error-ratio");
    }

    @Test
    void aWrongTokenIsRefusedByTheServer() {
        CliRun refused = run(
                Map.of("GRPCOPS_ADMIN_TOKEN", "not-the-token-but-long-enough"), "fault", target, "--delay", "200ms");
        assertThat(refused.exit()).isEqualTo(1);
        assertThat(refused.err()).contains("PERMISSION_DENIED");
        assertThat(faults.current()).isEqualTo(Faults.NONE);
    }

    @Test
    void badValuesAreRefusedNamingWhatIsWrong() {
        Map<String, String> env = Map.of("GRPCOPS_ADMIN_TOKEN", TOKEN);
        CliRun ratio = run(env, "fault", target, "--error-ratio", "2");
        assertThat(ratio.exit()).isEqualTo(1);
        assertThat(ratio.err()).contains("INVALID_ARGUMENT", "error_ratio");
        CliRun stall = run(env, "fault", target, "--stall", "200ms");
        assertThat(stall.exit()).isEqualTo(2);
        assertThat(stall.err()).contains("--stall takes D/P");
        CliRun both = run(env, "fault", target, "--clear", "--delay", "1s");
        assertThat(both.exit()).isEqualTo(2);
        assertThat(faults.current()).isEqualTo(Faults.NONE);
    }
}
