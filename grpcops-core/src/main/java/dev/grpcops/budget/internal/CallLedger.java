package dev.grpcops.budget.internal;

import com.google.errorprone.annotations.concurrent.GuardedBy;
import dev.grpcops.budget.Budget;
import dev.grpcops.budget.LedgerLine;
import io.grpc.Context;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.ArrayList;
import java.util.List;
import org.jspecify.annotations.Nullable;

/**
 * What one served call's hop records for its {@link LedgerLine}: made on arrival by
 * {@link BudgetServerInterceptor}, told by admission when the handler starts and by
 * {@link BudgetClientInterceptor} what each downstream call was granted and, when the caller asked for
 * the ledger, what those calls' hops returned. It rides in the call's {@link Context}.
 */
public final class CallLedger {

    static final Context.Key<CallLedger> KEY = Context.key("grpcops-call-ledger");

    /**
     * The most lines a hop passes back from its downstream calls: a Checkout of a hundred SKUs would
     * otherwise return hundreds, past the 8 KiB of metadata a gRPC peer accepts by default, and the
     * call would fail for its ledger. What is left out is counted ({@link LedgerLine#OMITTED}).
     */
    static final int MAX_DOWNSTREAM_LINES = 24;

    private static final VarHandle GRANTED;

    static {
        try {
            GRANTED = MethodHandles.lookup().findVarHandle(CallLedger.class, "grantedNanos", long.class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    private final String hop;
    private final Budget budget;
    private final long receivedNanos;
    private final long arrivedNanos;
    /** The ask, as the caller sent it, to pass on downstream; null when the caller did not ask or may not. */
    private final String ask;

    private volatile long handlerStartedNanos;
    /** The line once the call has been answered: the span, the metrics and the trailers read the same one. */
    private volatile LedgerLine answered;

    /** The longest deadline handed downstream (through {@link #GRANTED}: no object per call for it). */
    private volatile long grantedNanos;
    /** Only a call whose caller asked for the ledger keeps these: no object per call for them otherwise. */
    @GuardedBy("this")
    private @Nullable List<LedgerLine> downstream;

    @GuardedBy("this")
    private int omitted;

    CallLedger(String hop, Budget budget, String ask) {
        this.hop = hop;
        this.budget = budget;
        this.receivedNanos = budget.remainingNanos();
        this.arrivedNanos = System.nanoTime();
        this.handlerStartedNanos = arrivedNanos;
        this.ask = ask;
    }

    /** The ledger of the call served in the current context, or null. */
    public static CallLedger current() {
        return KEY.get();
    }

    /** The ledger of the call served in {@code context}, or null. */
    public static CallLedger in(Context context) {
        return KEY.get(context);
    }

    Context attachTo(Context context) {
        return context.withValue(KEY, this);
    }

    /**
     * Admission has decided now (a seat, or an answer): the time since arrival was spent queued. A
     * call that no admission held starts its handler on arrival.
     */
    public void waitEnded() {
        handlerStartedNanos = System.nanoTime();
    }

    void granted(long deadlineNanos) {
        long now;
        do {
            now = grantedNanos;
        } while (deadlineNanos > now && !GRANTED.compareAndSet(this, now, deadlineNanos));
    }

    /** The caller's ask, to send on with each downstream call; null when the caller did not ask. */
    String ask() {
        return ask;
    }

    /**
     * A downstream call returned {@code lines}: they go back to the asker behind this hop's own.
     * What is not a line is left out; nothing a peer sent makes this throw.
     */
    synchronized void returned(Iterable<String> lines) {
        if (lines == null) {
            return;
        }
        for (String value : lines) {
            int left = LedgerLine.omittedIn(value);
            if (left > 0) {
                omitted += left;
                continue;
            }
            var line = LedgerLine.parse(value);
            if (line.isEmpty()) {
                continue;
            }
            if (downstream == null) {
                downstream = new ArrayList<>();
            }
            if (downstream.size() < MAX_DOWNSTREAM_LINES) {
                downstream.add(line.get().deeper());
            } else {
                omitted++;
            }
        }
    }

    /** The hop's line, as it answers: made at the first asking (the call's close), the same afterwards. */
    public LedgerLine answered() {
        LedgerLine line = answered;
        if (line == null) {
            line = line();
            answered = line;
        }
        return line;
    }

    private LedgerLine line() {
        long now = System.nanoTime();
        long started = handlerStartedNanos;
        return LedgerLine.of(
                hop,
                receivedNanos,
                budget.defaulted(),
                Math.max(0, started - arrivedNanos),
                Math.max(0, now - started),
                grantedNanos,
                budget.remainingNanos());
    }

    /** The lines the downstream calls returned, in the order they came, up to {@link #MAX_DOWNSTREAM_LINES}. */
    synchronized List<LedgerLine> downstream() {
        return downstream == null ? List.of() : List.copyOf(downstream);
    }

    /** How many lines were left out, here or further down. */
    synchronized int omitted() {
        return omitted;
    }
}
