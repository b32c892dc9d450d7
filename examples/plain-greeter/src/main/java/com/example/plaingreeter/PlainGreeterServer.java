package com.example.plaingreeter;

import dev.grpcops.ServerStack;
import dev.grpcops.admin.AdminAuthorization;
import dev.grpcops.admission.Admission;
import dev.grpcops.admission.AdmissionConfig;
import dev.grpcops.admission.AdmissionInterceptors;
import dev.grpcops.deadline.BudgetInterceptors;
import dev.grpcops.deadline.BudgetRules;
import dev.grpcops.drain.DrainBeforeStop;
import dev.grpcops.drain.InFlightCalls;
import dev.grpcops.fault.FaultInjection;
import io.grpc.Server;
import io.grpc.health.v1.HealthCheckResponse.ServingStatus;
import io.grpc.health.v1.HealthGrpc;
import io.grpc.netty.shaded.io.grpc.netty.NettyServerBuilder;
import io.grpc.protobuf.services.HealthStatusManager;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.util.List;
import java.util.Set;
import java.util.concurrent.TimeUnit;

/**
 * The Greeter on plain grpc-java with every grpcops server feature, through one {@link
 * ServerStack}: admin authorization, the warm-up mark, deadline budgets, fair admission, fault
 * injection (set with {@code grpcops fault}, admin token required) and drain-before-stop.
 *
 * <pre>
 * GRPCOPS_ADMIN_TOKEN=... java -cp ... com.example.plaingreeter.PlainGreeterServer 50071
 * </pre>
 */
public final class PlainGreeterServer {

    private final Server server;
    private final DrainBeforeStop drain;

    private PlainGreeterServer(Server server, DrainBeforeStop drain) {
        this.server = server;
        this.drain = drain;
    }

    public static void main(String[] args) throws Exception {
        int port = args.length > 0 ? Integer.parseInt(args[0]) : 50071;
        PlainGreeterServer greeter = start(new InetSocketAddress(port), System.getenv("GRPCOPS_ADMIN_TOKEN"));
        Runtime.getRuntime().addShutdownHook(new Thread(greeter::stop, "drain"));
        greeter.server.awaitTermination();
    }

    /** Serving on {@code address} (port 0: any free one). */
    static PlainGreeterServer start(InetSocketAddress address, String adminToken) throws IOException {
        FaultInjection faults = FaultInjection.builder().build();
        InFlightCalls inFlight = new InFlightCalls(Set.of(HealthGrpc.SERVICE_NAME));
        ServerStack stack = ServerStack.builder()
                .adminAuthorization(AdminAuthorization.builder(List.of(FaultInjection.adminMethods()))
                        .token(adminToken))
                .warmUp()
                // A caller with the admin token gets where the budget went: grpcops call ... --ledger.
                .budget(BudgetInterceptors.builder(BudgetRules.DEFAULTS)
                        .ledgerToken(adminToken)
                        .build())
                .admission(AdmissionInterceptors.server(
                        Admission.builder(AdmissionConfig.builder().build()).build()))
                .faults(faults)
                .inFlight(inFlight)
                .build();

        HealthStatusManager health = new HealthStatusManager();
        Server server = NettyServerBuilder.forAddress(address)
                .addService(stack.intercept(new GreeterService()))
                .addService(stack.intercept(faults.adminService()))
                .addService(stack.intercept(health.getHealthService()))
                .build()
                .start();
        health.setStatus("", ServingStatus.SERVING);
        return new PlainGreeterServer(server, DrainBeforeStop.builder(health, inFlight).build());
    }

    int port() {
        return server.getPort();
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
