package dev.grpcops.spring.admission;

import dev.grpcops.admission.Admission;
import dev.grpcops.admission.AdmissionListener;
import dev.grpcops.admission.RejectReason;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import java.time.Duration;
import java.util.Collection;
import java.util.HashMap;
import java.util.Map;

/**
 * The admission metrics, built once per level when the application starts, never per call:
 * {@code grpc_admission_rejected_total{priority_level,reason}}, {@code grpc_admission_dispatched_total},
 * {@code grpc_admission_wait_seconds} (histogram), and the gauges {@code grpc_admission_inqueue_requests},
 * {@code grpc_admission_executing_seats}, {@code grpc_admission_limit_seats}. No per-caller label.
 */
final class MicrometerAdmissionListener implements AdmissionListener {

    private static final Duration[] WAIT_BUCKETS = {
        Duration.ofMillis(1),
        Duration.ofMillis(5),
        Duration.ofMillis(10),
        Duration.ofMillis(25),
        Duration.ofMillis(50),
        Duration.ofMillis(100),
        Duration.ofMillis(250),
        Duration.ofMillis(500),
        Duration.ofSeconds(1),
        Duration.ofMillis(2500),
        Duration.ofSeconds(5)
    };

    private final Map<String, Counter[]> rejected = new HashMap<>();
    private final Map<String, Timer> waits = new HashMap<>();

    MicrometerAdmissionListener(MeterRegistry registry, Collection<String> levels) {
        for (String level : levels) {
            Counter[] byReason = new Counter[RejectReason.values().length];
            for (RejectReason reason : RejectReason.values()) {
                byReason[reason.ordinal()] = Counter.builder("grpc.admission.rejected")
                        .description("Calls admission turned away, by priority level and reason")
                        .tag("priority_level", level)
                        .tag("reason", reason.label())
                        .register(registry);
            }
            rejected.put(level, byReason);
            Timer wait = Timer.builder("grpc.admission.wait")
                    .description("Time calls waited for a seat (0 when one was free)")
                    .tag("priority_level", level)
                    .serviceLevelObjectives(WAIT_BUCKETS)
                    .register(registry);
            waits.put(level, wait);
            // Every dispatched call records its wait: the count is there already, nothing more per call.
            FunctionCounter.builder("grpc.admission.dispatched", wait, Timer::count)
                    .description("Calls admission gave a seat, by priority level")
                    .tag("priority_level", level)
                    .register(registry);
        }
    }

    /** The gauges read the admission itself when scraped. */
    static void registerGauges(MeterRegistry registry, Admission admission) {
        for (Admission.Level level : admission.levels()) {
            Gauge.builder("grpc.admission.inqueue.requests", level, Admission.Level::inQueue)
                    .description("Calls waiting in the level's queues")
                    .tag("priority_level", level.name())
                    .register(registry);
            Gauge.builder("grpc.admission.executing.seats", level, Admission.Level::executingSeats)
                    .description("Seats the level's calls hold, borrowed ones included")
                    .tag("priority_level", level.name())
                    .register(registry);
            Gauge.builder("grpc.admission.limit.seats", level, Admission.Level::nominalSeats)
                    .description("Seats the level is guaranteed (its nominal share of the server's limit)")
                    .tag("priority_level", level.name())
                    .register(registry);
        }
    }

    @Override
    public void dispatched(String level, long waitNanos) {
        waits.get(level).record(waitNanos, java.util.concurrent.TimeUnit.NANOSECONDS);
    }

    @Override
    public void rejected(String level, RejectReason reason) {
        rejected.get(level)[reason.ordinal()].increment();
    }
}
