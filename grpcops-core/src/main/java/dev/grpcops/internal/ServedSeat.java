package dev.grpcops.internal;

import com.google.errorprone.annotations.concurrent.GuardedBy;
import io.grpc.Context;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.function.LongSupplier;

/**
 * A served call's admission seat as the layers inside admission see it. It counts the calls the
 * served call has open downstream, so that the seat is freed only once the call and all of them
 * have ended (design §16): a caller that cancels a fan-out leaves its downstream
 * calls running until their cancellations go out (within the channel's cancellation budget) or
 * they end by themselves, and that work stays within the caller's seats, not beside them.
 *
 * <p>Counts the served call itself as one: {@link #ended()} once for it, {@link #endedDownstream()}
 * once for each downstream call {@link #started()} counted. The last end runs the release, exactly
 * once. A downstream call started after that is not counted.
 *
 * <p>It also measures the time the seat was held while the call waited on others: while at least
 * one of its downstream calls was open, and while fault injection held its answer. Admission leaves
 * that time out of what it takes as the server's own work: an adaptive limit's sample (a slower
 * dependency is not queueing here, and fewer seats here would not make it faster), and the work a
 * queued call is judged to need.
 */
public final class ServedSeat {

    private static final Context.Key<ServedSeat> KEY = Context.key("grpcops-open-downstream");

    private static final VarHandle OPEN;

    static {
        try {
            OPEN = MethodHandles.lookup().findVarHandle(ServedSeat.class, "open", int.class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    /** The served call and its downstream calls still open (through {@link #OPEN}: no object per call for it). */
    private volatile int open = 1;

    private final Runnable release;
    private final LongSupplier nanoClock;

    /** What the call waits on now: its downstream calls open, and fault injection holding its answer. */
    @GuardedBy("this")
    private int waitingOn;

    @GuardedBy("this")
    private long waitingSince;

    @GuardedBy("this")
    private long waitedNanos;

    /** Set at the last end: what ends after it is not this seat's time. */
    @GuardedBy("this")
    private boolean finished;

    private ServedSeat(Runnable release, LongSupplier nanoClock) {
        this.release = release;
        this.nanoClock = java.util.Objects.requireNonNull(nanoClock, "nanoClock");
    }

    /**
     * {@code context} with a seat whose last end runs {@code release}, measuring on {@code nanoClock}
     * how long the call waited on others ({@link #waitedNanos()}).
     */
    public static Context attach(Context context, LongSupplier nanoClock, Runnable release) {
        return context.withValue(KEY, new ServedSeat(release, nanoClock));
    }

    /** The seat {@code context} carries, or null. */
    public static ServedSeat current(Context context) {
        return KEY.get(context);
    }

    /** A downstream call starts; false when the served call and its calls have all ended already. */
    public boolean started() {
        while (true) {
            int now = open;
            if (now == 0) {
                return false;
            }
            if (OPEN.compareAndSet(this, now, now + 1)) {
                waitStarted();
                return true;
            }
        }
    }

    /** Fault injection holds the call's answer from now until {@link #holdEnded()}. */
    public void holdStarted() {
        waitStarted();
    }

    /** Fault injection lets the held answer go (after the seat's last end, nothing is counted). */
    public void holdEnded() {
        waitEnded();
    }

    /** A downstream call {@link #started()} counted has ended. */
    public void endedDownstream() {
        waitEnded();
        ended();
    }

    /** The served call has ended (its downstream calls end with {@link #endedDownstream()}). */
    public void ended() {
        if ((int) OPEN.getAndAdd(this, -1) == 1) {
            finish();
            release.run();
        }
    }

    /**
     * How long the seat was held while the call waited on others: at least one of its downstream
     * calls open, or fault injection holding its answer (one interval where they overlap). Complete
     * once the last end has run, when the release reads it.
     */
    public synchronized long waitedNanos() {
        return waitedNanos;
    }

    private synchronized void waitStarted() {
        if (!finished && waitingOn++ == 0) {
            waitingSince = nanoClock.getAsLong();
        }
    }

    private synchronized void waitEnded() {
        if (!finished && waitingOn > 0 && --waitingOn == 0) {
            waitedNanos += nanoClock.getAsLong() - waitingSince;
        }
    }

    /** A wait still open at the last end (a hold the caller's cancel cut short) counts until now. */
    private synchronized void finish() {
        if (waitingOn > 0) {
            waitedNanos += nanoClock.getAsLong() - waitingSince;
            waitingOn = 0;
        }
        finished = true;
    }
}
