package dev.grpcops.shutdown;

import io.grpc.ForwardingServerCallListener;
import io.grpc.Metadata;
import io.grpc.ServerCall;
import io.grpc.ServerCallHandler;
import io.grpc.ServerInterceptor;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.time.Duration;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Counts the calls being served, long-lived streams (health Watch) left out, so that a stopping
 * server can wait until the last one has finished ({@link #awaitNone}) without polling.
 */
public final class InFlightCalls implements ServerInterceptor {

    private final AtomicInteger inFlight = new AtomicInteger();
    /** Waiters for zero calls; taken only when the count reaches zero, never per call otherwise. */
    private final Object zero = new Object();

    private final Set<String> longLivedServices;

    /** @param longLivedServices services whose calls are long-lived streams and are not counted */
    public InFlightCalls(Set<String> longLivedServices) {
        this.longLivedServices = Set.copyOf(longLivedServices);
    }

    public int count() {
        return inFlight.get();
    }

    /**
     * Waits until no call is in flight, at most {@code timeout} (negative: as long as it takes).
     *
     * @return true if none is left, false if the timeout passed first
     */
    public boolean awaitNone(Duration timeout) throws InterruptedException {
        long deadline = System.nanoTime() + (timeout.isNegative() ? Long.MAX_VALUE / 2 : timeout.toNanos());
        synchronized (zero) {
            while (inFlight.get() > 0) {
                long left = deadline - System.nanoTime();
                if (left <= 0) {
                    return false;
                }
                TimeUnit.NANOSECONDS.timedWait(zero, left);
            }
            return true;
        }
    }

    @Override
    public <ReqT, RespT> ServerCall.Listener<ReqT> interceptCall(
            ServerCall<ReqT, RespT> call, Metadata headers, ServerCallHandler<ReqT, RespT> next) {
        if (longLivedServices.contains(call.getMethodDescriptor().getServiceName())) {
            return next.startCall(call, headers);
        }
        inFlight.incrementAndGet();
        Counted<ReqT> counted = new Counted<>();
        try {
            counted.delegate = next.startCall(call, headers);
        } catch (Throwable e) {
            // An Error too: a count that never comes down would hold every drain for its whole grace.
            counted.release();
            throw e;
        }
        return counted;
    }

    /**
     * One object per counted call: the listener that ends the count when the call ends (exactly one
     * of onComplete and onCancel ends every call), and the flag that makes the release happen once.
     */
    private final class Counted<ReqT> extends ForwardingServerCallListener<ReqT> {

        /** Set before the transport sees this listener (returned from interceptCall). */
        private ServerCall.Listener<ReqT> delegate;

        private volatile int released;

        @Override
        protected ServerCall.Listener<ReqT> delegate() {
            return delegate;
        }

        @Override
        public void onComplete() {
            try {
                super.onComplete();
            } finally {
                release();
            }
        }

        @Override
        public void onCancel() {
            try {
                super.onCancel();
            } finally {
                release();
            }
        }

        void release() {
            if (RELEASED.compareAndSet(this, 0, 1) && inFlight.decrementAndGet() == 0) {
                synchronized (zero) {
                    zero.notifyAll();
                }
            }
        }
    }

    private static final VarHandle RELEASED;

    static {
        try {
            RELEASED = MethodHandles.lookup().findVarHandle(Counted.class, "released", int.class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }
}
