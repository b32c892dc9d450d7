package com.example.plaingreeter;

import com.example.plaingreeter.v1.GreetRequest;
import com.example.plaingreeter.v1.GreeterGrpc;
import dev.grpcops.ServerStack;
import dev.grpcops.admin.AdminAuthorization;
import dev.grpcops.admission.AdaptiveLimit;
import dev.grpcops.admission.Admission;
import dev.grpcops.admission.AdmissionConfig;
import dev.grpcops.admission.AdmissionInterceptors;
import dev.grpcops.budget.BudgetInterceptors;
import dev.grpcops.budget.BudgetRules;
import dev.grpcops.shutdown.DrainBeforeStop;
import dev.grpcops.shutdown.InFlightCalls;
import dev.grpcops.fault.FaultInjection;
import dev.grpcops.tracing.GrpcTracing;
import dev.grpcops.warmup.WarmUp;
import dev.grpcops.warmup.WarmUpResult;
import io.grpc.ManagedChannel;
import io.grpc.Server;
import io.grpc.health.v1.HealthCheckResponse.ServingStatus;
import io.grpc.health.v1.HealthGrpc;
import io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder;
import io.grpc.netty.shaded.io.grpc.netty.NettyServerBuilder;
import io.grpc.protobuf.services.HealthStatusManager;
import io.opentelemetry.api.GlobalOpenTelemetry;
import io.opentelemetry.api.OpenTelemetry;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

/**
 * The Greeter on plain grpc-java with every grpcops server feature, through one {@link
 * ServerStack}: admin authorization, tracing, deadline budgets (and the ledger for an admin
 * caller), fair admission with an adaptive limit, fault injection (set with {@code grpcops fault},
 * admin token required), a warm-up before it says SERVING, and drain-before-stop.
 *
 * <pre>
 * GRPCOPS_ADMIN_TOKEN=... java -cp ... com.example.plaingreeter.PlainGreeterServer 50071
 * </pre>
 *
 * Spans go to the OpenTelemetry SDK the application registers ({@link GlobalOpenTelemetry}; the
 * OpenTelemetry Java agent does), nowhere without one.
 */
public final class PlainGreeterServer {

    private final Server server;
    private final DrainBeforeStop drain;
    private final CompletableFuture<WarmUpResult> warmedUp;

    private PlainGreeterServer(Server server, DrainBeforeStop drain, CompletableFuture<WarmUpResult> warmedUp) {
        this.server = server;
        this.drain = drain;
        this.warmedUp = warmedUp;
    }

    public static void main(String[] args) throws Exception {
        int port = args.length > 0 ? Integer.parseInt(args[0]) : 50071;
        PlainGreeterServer greeter = start(
                new InetSocketAddress(port), System.getenv("GRPCOPS_ADMIN_TOKEN"), GlobalOpenTelemetry.get());
        Runtime.getRuntime().addShutdownHook(new Thread(greeter::stop, "drain"));
        greeter.server.awaitTermination();
    }

    /** Serving on {@code address} (port 0: any free one); SERVING once its warm-up is done. */
    static PlainGreeterServer start(InetSocketAddress address, String adminToken, OpenTelemetry openTelemetry)
            throws IOException {
        FaultInjection faults = FaultInjection.builder().build();
        InFlightCalls inFlight = new InFlightCalls(Set.of(HealthGrpc.SERVICE_NAME));
        ServerStack stack = ServerStack.builder()
                .adminAuthorization(AdminAuthorization.builder(List.of(FaultInjection.adminMethods()))
                        .token(adminToken)
                        .build())
                .warmUp()
                .tracing(GrpcTracing.builder(openTelemetry).build())
                // A caller with the ledger token (a secret of its own) gets where the budget went:
                // grpcops call ... --ledger.
                .budget(BudgetInterceptors.builder(BudgetRules.DEFAULTS)
                        .ledgerToken(System.getenv("GRPCOPS_BUDGET_LEDGER_TOKEN"))
                        .build())
                // Seats that follow measured latency, between AdaptiveLimit's bounds.
                .admission(AdmissionInterceptors.server(Admission.builder(AdmissionConfig.builder()
                                .adaptiveLimit(AdaptiveLimit.builder().build())
                                .build())
                        .build())
                        .build())
                .faults(faults)
                .inFlight(inFlight)
                .build();

        HealthStatusManager health = new HealthStatusManager();
        health.setStatus("", ServingStatus.NOT_SERVING);
        Server server = NettyServerBuilder.forAddress(address)
                // The library's channels ping every 10 s, also without calls: permit it.
                .permitKeepAliveTime(5, java.util.concurrent.TimeUnit.SECONDS)
                .permitKeepAliveWithoutCalls(true)
                .addService(stack.intercept(new GreeterService()))
                .addService(stack.intercept(faults.adminService()))
                .addService(stack.intercept(health.getHealthService()))
                .build()
                .start();
        return new PlainGreeterServer(
                server, DrainBeforeStop.builder(health, inFlight).build(), warmUp(server, health));
    }

    /** Greets through the server's own port until the JIT has compiled the path, then SERVING. */
    private static CompletableFuture<WarmUpResult> warmUp(Server server, HealthStatusManager health) {
        WarmUp warmUp = WarmUp.builder()
                .call(GreeterGrpc.getGreetMethod(), GreetRequest.newBuilder().setName("warm-up").build(), 500)
                .timeLimit(Duration.ofSeconds(10))
                .build();
        InetSocketAddress bound = (InetSocketAddress) server.getListenSockets().get(0);
        ManagedChannel self = NettyChannelBuilder.forAddress(
                        bound.getAddress().isAnyLocalAddress() ? "127.0.0.1" : bound.getHostString(), bound.getPort())
                .usePlaintext()
                .build();
        CompletableFuture<WarmUpResult> run = warmUp.run(self);
        run.whenComplete((result, never) -> {
            self.shutdown();
            health.setStatus("", ServingStatus.SERVING);
        });
        return run;
    }

    int port() {
        return server.getPort();
    }

    /** Done when the warm-up is; the server says SERVING right after. */
    CompletableFuture<WarmUpResult> warmedUp() {
        return warmedUp;
    }

    /** NOT_SERVING, a wait for clients to move away, then the calls in flight finish. */
    void stop() {
        drain.drain(List.of(server));
    }

    /** At once, calls in flight failed (for tests). */
    void stopNow() throws InterruptedException {
        server.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
    }
}
