package dev.grpcops.edge;

import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The Quotes Edge has sent and not yet seen answered, bounded: every held downstream call costs
 * memory here and in Pricing, so beyond the bound a line is answered RESOURCE_EXHAUSTED at once
 * instead. Exported as {@code edge_quotes_in_flight}.
 */
final class QuotesInFlight {

    private final AtomicInteger inFlight = new AtomicInteger();
    private final int max;

    QuotesInFlight(int max, MeterRegistry registry) {
        this.max = max;
        Gauge.builder("edge.quotes.in.flight", inFlight, AtomicInteger::get)
                .description("Quotes sent to Pricing and not yet answered (bounded by edge.max-quotes-in-flight)")
                .register(registry);
    }

    /** Takes a place for one Quote, if one is free. Each successful call needs exactly one {@link #release()}. */
    boolean tryAcquire() {
        int now;
        do {
            now = inFlight.get();
            if (now >= max) {
                return false;
            }
        } while (!inFlight.compareAndSet(now, now + 1));
        return true;
    }

    void release() {
        inFlight.decrementAndGet();
    }

    int max() {
        return max;
    }
}
