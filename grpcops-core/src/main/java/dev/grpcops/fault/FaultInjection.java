package dev.grpcops.fault;

import dev.grpcops.Experimental;
import dev.grpcops.InfrastructureServices;
import dev.grpcops.admin.AdminMethods;
import dev.grpcops.fault.internal.FaultInjectionInterceptor;
import dev.grpcops.fault.internal.FaultsService;
import dev.grpcops.internal.SharedScheduler;
import dev.grpcops.proto.fault.v1.FaultsGrpc;
import io.grpc.BindableService;
import io.grpc.ServerInterceptor;
import java.util.HashSet;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.ScheduledExecutorService;
import java.util.function.DoubleSupplier;
import java.util.function.LongSupplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Faults injected on purpose into the calls a server answers, so that anyone can see what the
 * callers do about a slow, stalling or failing replica. Nothing is injected unless asked: at start
 * ({@link Builder#faults}) or at run time through the admin service ({@code grpcops.v1.Faults/Set},
 * guarded by the admin token like Drain). Health, reflection and the admin methods are never touched.
 * No thread waits for a held answer: it is sent later from the library's timer thread.
 *
 * <pre>{@code
 * FaultInjection faults = FaultInjection.builder().replica("stock-1").build();
 * server.addService(ServerInterceptors.intercept(stock, faults.interceptor())).addService(faults.adminService());
 * }</pre>
 */
@Experimental("A lab tool: its faults follow what the suite's experiments need")
public final class FaultInjection {

    private static final Logger log = LoggerFactory.getLogger(FaultInjection.class);

    private final String replica;
    private final FaultListener listener;
    private final ServerInterceptor interceptor;
    private volatile Faults current;

    private FaultInjection(Builder builder) {
        this.replica = builder.replica;
        this.listener = builder.listener;
        this.current = builder.faults;
        Set<String> exempt = new HashSet<>(builder.exemptServices);
        exempt.add(FaultsGrpc.SERVICE_NAME);
        this.interceptor = new FaultInjectionInterceptor(
                this::current,
                listener,
                exempt,
                builder.exemptMethods,
                builder.nanoClock,
                builder.random,
                builder.scheduler);
        if (current.any()) {
            log.warn("fault injection on {}: {}", replica, current);
        }
        listener.changed(current);
    }

    public static Builder builder() {
        return new Builder();
    }

    /** What is injected now. */
    public Faults current() {
        return current;
    }

    /**
     * Replaces what is injected; {@link Faults#NONE} clears it. Logged at WARN while anything is
     * injected. The listener hears of each change in the order they were made, so that two at once
     * never leave it showing a fault that is not the one applied.
     */
    public synchronized void set(Faults faults) {
        Faults previous = current;
        current = Objects.requireNonNull(faults, "faults");
        if (faults.any()) {
            log.warn("fault injection on {}: {} (was: {})", replica, faults, previous);
        } else {
            log.info("fault injection on {}: none (was: {})", replica, previous);
        }
        listener.changed(faults);
    }

    /** The server interceptor that injects: outermost but for admission, so held answers hold their seat. */
    public ServerInterceptor interceptor() {
        return interceptor;
    }

    /** {@code grpcops.v1.Faults}: {@code Get} for anyone, {@code Set} for admins ({@link #adminMethods()}). */
    public BindableService adminService() {
        return new FaultsService(this::current, this::set, replica);
    }

    /** The admin methods of {@link #adminService()}: guard them with {@code AdminAuthorization}. */
    public static AdminMethods adminMethods() {
        return AdminMethods.of(FaultsGrpc.getSetMethod());
    }

    /** What operators see of this replica's faults, and what the injection does. */
    public static final class Builder {

        private String replica = "local";
        private Faults faults = Faults.NONE;
        private FaultListener listener = FaultListener.NONE;
        private Set<String> exemptServices = Set.copyOf(InfrastructureServices.NAMES);
        private Set<String> exemptMethods = Set.of();
        private LongSupplier nanoClock = System::nanoTime;
        private DoubleSupplier random =
                () -> java.util.concurrent.ThreadLocalRandom.current().nextDouble();
        private ScheduledExecutorService scheduler = SharedScheduler.get();

        private Builder() {}

        /** The replica's name, as {@code Get} answers it and the log says it ({@code local} by default). */
        public Builder replica(String replica) {
            this.replica = Objects.requireNonNull(replica, "replica");
            return this;
        }

        /** What to inject from the start; {@link Faults#NONE} by default. */
        public Builder faults(Faults faults) {
            this.faults = Objects.requireNonNull(faults, "faults");
            return this;
        }

        /** Told of every change and every injected fault (metrics); nothing by default. */
        public Builder listener(FaultListener listener) {
            this.listener = Objects.requireNonNull(listener, "listener");
            return this;
        }

        /** Services never touched; health and reflection by default ({@code grpcops.v1.Faults} always). */
        public Builder exemptServices(Set<String> exemptServices) {
            this.exemptServices = Set.copyOf(exemptServices);
            return this;
        }

        /** Methods (full names) never touched, e.g. admin methods; none by default. */
        public Builder exemptMethods(Set<String> exemptMethods) {
            this.exemptMethods = Set.copyOf(exemptMethods);
            return this;
        }

        /** A monotonic clock in nanoseconds, for the stall periods (tests give a fake one). */
        public Builder nanoClock(LongSupplier nanoClock) {
            this.nanoClock = Objects.requireNonNull(nanoClock, "nanoClock");
            return this;
        }

        /** Draws in [0, 1) for the error ratio (tests give a fixed one). */
        public Builder random(DoubleSupplier random) {
            this.random = Objects.requireNonNull(random, "random");
            return this;
        }

        /** Sends held answers when their time comes; the library's timer thread by default. */
        public Builder scheduler(ScheduledExecutorService scheduler) {
            this.scheduler = Objects.requireNonNull(scheduler, "scheduler");
            return this;
        }

        public FaultInjection build() {
            return new FaultInjection(this);
        }
    }
}
