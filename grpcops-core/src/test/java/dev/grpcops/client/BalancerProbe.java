package dev.grpcops.client;

import io.grpc.LoadBalancer;
import io.grpc.LoadBalancerProvider;
import java.util.concurrent.ScheduledExecutorService;
import java.util.function.LongSupplier;
import java.util.function.Supplier;
import java.util.random.RandomGenerator;

/** What tests and simulations outside this package may make and ask of the library's balancers. */
public final class BalancerProbe {

    private BalancerProbe() {}

    /** The peak-EWMA policy under {@code name}, on {@code nanoClock}, {@code random} and {@code timer}. */
    public static LoadBalancerProvider peakEwma(
            String name, LongSupplier nanoClock, Supplier<RandomGenerator> random, ScheduledExecutorService timer) {
        return new PeakEwmaLoadBalancerProvider(name, nanoClock, random, timer);
    }

    /**
     * Whether {@code picker} (the balancer's own) may pick the replica whose address prints as
     * {@code address}: ready and not ejected. False for any other picker.
     */
    public static boolean offers(LoadBalancer.SubchannelPicker picker, String address) {
        return picker instanceof Picker ours
                && ours.offers(key -> key.toString().contains(address));
    }
}
