package dev.grpcops.spring.fault;

import dev.grpcops.fault.FaultListener;
import dev.grpcops.fault.Faults;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;

/**
 * What this replica injects, as Prometheus sees it: {@code grpc_fault_delay_seconds},
 * {@code grpc_fault_stall_seconds}, {@code grpc_fault_stall_period_seconds}, {@code grpc_fault_work_seconds},
 * {@code grpc_fault_error_ratio} (all 0 unless asked) and {@code grpc_fault_injected_total{kind}}
 * (error, delay, stall, work).
 */
final class MicrometerFaultListener implements FaultListener {

    private volatile Faults current = Faults.NONE;
    private final Counter errors;
    private final Counter delays;
    private final Counter stalls;
    private final Counter works;

    MicrometerFaultListener(MeterRegistry registry) {
        Gauge.builder("grpc.fault.delay", this, l -> l.current.delay().toNanos() / 1e9)
                .baseUnit("seconds")
                .description("Extra delay injected before every answer")
                .register(registry);
        Gauge.builder("grpc.fault.stall", this, l -> l.current.stall().toNanos() / 1e9)
                .baseUnit("seconds")
                .description("How long answers are held at the start of each stall period")
                .register(registry);
        Gauge.builder(
                        "grpc.fault.stall.period",
                        this,
                        l -> l.current.stallEvery().toNanos() / 1e9)
                .baseUnit("seconds")
                .description("The period of the injected stalls (0: none)")
                .register(registry);
        Gauge.builder("grpc.fault.work", this, l -> l.current.work().toNanos() / 1e9)
                .baseUnit("seconds")
                .description("CPU work injected before every call's handler runs")
                .register(registry);
        Gauge.builder("grpc.fault.error.ratio", this, l -> l.current.errorRatio())
                .description("Share of calls failed at once with UNAVAILABLE on purpose")
                .register(registry);
        errors = injected(registry, "error");
        delays = injected(registry, "delay");
        stalls = injected(registry, "stall");
        works = injected(registry, "work");
    }

    private static Counter injected(MeterRegistry registry, String kind) {
        return Counter.builder("grpc.fault.injected")
                .description("Calls a fault was injected into, by kind")
                .tag("kind", kind)
                .register(registry);
    }

    @Override
    public void changed(Faults faults) {
        current = faults;
    }

    @Override
    public void failed() {
        errors.increment();
    }

    @Override
    public void held(boolean delayed, boolean stalled) {
        if (delayed) {
            delays.increment();
        }
        if (stalled) {
            stalls.increment();
        }
    }

    @Override
    public void worked() {
        works.increment();
    }
}
