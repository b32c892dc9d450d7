package dev.grpcops.internal;

import io.grpc.CallOptions;

/**
 * What an attempt tells the balancer, and learns from it, through its call options: the replica the
 * balancer picked for it, and the replica it should avoid. Two attempts of one call (a first and its
 * hedge or retry) avoid each other, whichever is picked first: a hedge sent while its first is still
 * waiting for a replica (a channel leaving idle, a call waiting for one to be ready) goes elsewhere
 * once the first has one, and so does the first, picked after its hedge. Balancers that do not know
 * it ignore it.
 */
public final class PickHint {

    public static final CallOptions.Key<PickHint> KEY = CallOptions.Key.create("grpcops-pick-hint");

    /** The other attempt of the pair; set once, before either is started. */
    private volatile PickHint other;

    private volatile Object picked;

    private PickHint() {}

    /** For a first attempt: avoids nothing yet, remembers what it got. */
    public static PickHint first() {
        return new PickHint();
    }

    /** For an attempt that should go elsewhere than {@code previous} went, and {@code previous} elsewhere than it. */
    public static PickHint avoiding(PickHint previous) {
        PickHint hint = new PickHint();
        hint.other = previous;
        previous.other = hint;
        return hint;
    }

    /** The replica (the balancer's own key) to keep away from: the other attempt's, or null. */
    public Object avoid() {
        PickHint pair = other;
        return pair == null ? null : pair.picked;
    }

    /** Set by the balancer: the replica this attempt was given. */
    public void picked(Object replica) {
        this.picked = replica;
    }

    public Object picked() {
        return picked;
    }
}
