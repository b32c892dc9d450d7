package dev.grpcops.internal;

import io.grpc.Context;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

/**
 * A served call's admission seat as the layers inside admission see it. It counts the calls the
 * served call has open downstream, so that the seat is freed only once the call and all of them
 * have ended (SPEC §16): a caller that cancels a fan-out leaves its downstream
 * calls running until their cancellations go out (within the channel's cancellation budget) or
 * they end by themselves, and that work stays within the caller's seats, not beside them.
 *
 * <p>Counts the served call itself as one: {@link #ended()} once for it, once for each downstream
 * call {@link #started()} counted. The last end runs the release, exactly once. A downstream call
 * started after that is not counted.
 */
public final class ServedSeat {

    private static final Context.Key<ServedSeat> KEY = Context.key("grpcops-open-downstream");

    private final AtomicInteger open = new AtomicInteger(1);
    /** How long fault injection held the call's answer: time the seat was held for no work. */
    private final AtomicLong heldNanos = new AtomicLong();

    private final Runnable release;

    private ServedSeat(Runnable release) {
        this.release = release;
    }

    /** {@code context} with a seat whose last end runs {@code release}. */
    public static Context attach(Context context, Runnable release) {
        return context.withValue(KEY, new ServedSeat(release));
    }

    /** The seat {@code context} carries, or null. */
    public static ServedSeat current(Context context) {
        return KEY.get(context);
    }

    /** A downstream call starts; false when the served call and its calls have all ended already. */
    public boolean started() {
        while (true) {
            int now = open.get();
            if (now == 0) {
                return false;
            }
            if (open.compareAndSet(now, now + 1)) {
                return true;
            }
        }
    }

    /** Fault injection held the call's answer this long after the handler sent it. */
    public void held(long nanos) {
        if (nanos > 0) {
            heldNanos.addAndGet(nanos);
        }
    }

    /** How long the call's answer was held in all. */
    public long heldNanos() {
        return heldNanos.get();
    }

    /** The served call, or one downstream call {@link #started} counted, has ended. */
    public void ended() {
        if (open.decrementAndGet() == 0) {
            release.run();
        }
    }
}
