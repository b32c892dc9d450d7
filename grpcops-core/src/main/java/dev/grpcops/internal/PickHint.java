package dev.grpcops.internal;

import io.grpc.CallOptions;

/**
 * What an attempt tells the balancer, and learns from it, through its call options: the replica the
 * balancer picked for it, and the replica it should avoid (a hedge goes to another replica than the
 * attempt it backs up). Balancers that do not know it ignore it.
 */
public final class PickHint {

    public static final CallOptions.Key<PickHint> KEY = CallOptions.Key.create("grpcops-pick-hint");

    private final PickHint avoid;
    private volatile Object picked;

    private PickHint(PickHint avoid) {
        this.avoid = avoid;
    }

    /** For a first attempt: avoids nothing, remembers what it got. */
    public static PickHint first() {
        return new PickHint(null);
    }

    /** For an attempt that should go elsewhere than {@code previous} went. */
    public static PickHint avoiding(PickHint previous) {
        return new PickHint(previous);
    }

    /** The replica (the balancer's own key) to keep away from, or null. */
    public Object avoid() {
        return avoid == null ? null : avoid.picked;
    }

    /** Set by the balancer: the replica this attempt was given. */
    public void picked(Object replica) {
        this.picked = replica;
    }

    public Object picked() {
        return picked;
    }
}
