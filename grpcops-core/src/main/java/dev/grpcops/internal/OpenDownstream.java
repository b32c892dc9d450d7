package dev.grpcops.internal;

import io.grpc.Context;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The calls a served call has open downstream, so that its admission seat is freed only once the
 * call and all of them have ended (SPEC §16): a caller that cancels a fan-out leaves its downstream
 * calls running until their cancellations go out (within the channel's cancellation budget) or
 * they end by themselves, and that work stays within the caller's seats, not beside them.
 *
 * <p>Counts the served call itself as one: {@link #ended()} once for it, once for each downstream
 * call {@link #started()} counted. The last end runs the release, exactly once. A downstream call
 * started after that is not counted.
 */
public final class OpenDownstream {

    private static final Context.Key<OpenDownstream> KEY = Context.key("grpcops-open-downstream");

    private final AtomicInteger open = new AtomicInteger(1);
    private final Runnable release;

    private OpenDownstream(Runnable release) {
        this.release = release;
    }

    /** {@code context} with a count whose last end runs {@code release}. */
    public static Context attach(Context context, Runnable release) {
        return context.withValue(KEY, new OpenDownstream(release));
    }

    /** The count {@code context} carries, or null. */
    public static OpenDownstream current(Context context) {
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

    /** The served call, or one downstream call {@link #started} counted, has ended. */
    public void ended() {
        if (open.decrementAndGet() == 0) {
            release.run();
        }
    }
}
