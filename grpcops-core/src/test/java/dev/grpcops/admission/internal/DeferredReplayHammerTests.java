package dev.grpcops.admission.internal;

import static dev.grpcops.testing.Lockstep.spin;
import static dev.grpcops.testing.Lockstep.waitFor;
import static org.assertj.core.api.Assertions.assertThat;

import dev.grpcops.admission.Admission;
import dev.grpcops.admission.AdmissionConfig;
import dev.grpcops.admission.AdmissionInterceptors;
import dev.grpcops.admission.AdmissionListener;
import dev.grpcops.admission.AdmissionRequest;
import dev.grpcops.admission.Caller;
import dev.grpcops.admission.CallerPolicy;
import dev.grpcops.admission.Criticality;
import dev.grpcops.admission.PriorityLevelConfig;
import dev.grpcops.admission.RejectReason;
import dev.grpcops.admission.Rejection;
import dev.grpcops.admission.Ticket;
import dev.grpcops.testing.Lockstep;
import io.grpc.Metadata;
import io.grpc.MethodDescriptor;
import io.grpc.ServerCall;
import io.grpc.ServerCallHandler;
import io.grpc.ServerInterceptor;
import io.grpc.Status;
import java.io.ByteArrayInputStream;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.Queue;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The admitted call's deferred listener under a race: the handler starts on the thread that frees
 * the seat while the transport thread reports messages, half-close, ready, cancel or complete. The
 * handler's listener must hear every event once, in the transport's order, one at a time, in the
 * call's context, and nothing after the call's last event; the seat is freed once.
 */
@Timeout(value = 180, unit = TimeUnit.SECONDS)
class DeferredReplayHammerTests {

    private static final int ITERATIONS = 5_000;
    /** Batches of {@link #ITERATIONS} rounds at most, while the interleavings a test names have not all come. */
    private static final int MAX_BATCHES = 8;

    private static final String LEVEL = "default";

    private static final MethodDescriptor.Marshaller<String> STRINGS = new MethodDescriptor.Marshaller<>() {
        @Override
        public InputStream stream(String value) {
            return new ByteArrayInputStream(value.getBytes(StandardCharsets.UTF_8));
        }

        @Override
        public String parse(InputStream stream) {
            throw new UnsupportedOperationException();
        }
    };

    private static final MethodDescriptor<String, String> METHOD = MethodDescriptor.<String, String>newBuilder()
            .setType(MethodDescriptor.MethodType.BIDI_STREAMING)
            .setFullMethodName("test.Hammer/Stream")
            .setRequestMarshaller(STRINGS)
            .setResponseMarshaller(STRINGS)
            .build();

    /** A transport's call: it only records how it was closed. */
    private static final class FakeCall extends ServerCall<String, String> {
        final Queue<Status> closes = new ConcurrentLinkedQueue<>();

        @Override
        public void request(int numMessages) {}

        @Override
        public void sendHeaders(Metadata headers) {}

        @Override
        public void sendMessage(String message) {}

        @Override
        public void close(Status status, Metadata trailers) {
            closes.add(status);
        }

        @Override
        public boolean isCancelled() {
            return false;
        }

        @Override
        public MethodDescriptor<String, String> getMethodDescriptor() {
            return METHOD;
        }
    }

    /** The handler's listener: what it heard, on which thread, and whether two callbacks ever overlapped. */
    private static final class Heard extends ServerCall.Listener<String> {
        final String caller;
        final Queue<String> events = new ConcurrentLinkedQueue<>();
        final Queue<String> problems = new ConcurrentLinkedQueue<>();
        final AtomicInteger inside = new AtomicInteger();
        final Queue<Thread> threads = new ConcurrentLinkedQueue<>();
        /** How long each callback works: a slow replay widens the window events may overtake it in. */
        final int work;

        Heard(String caller, int work) {
            this.caller = caller;
            this.work = work;
        }

        private void heard(String event) {
            if (inside.incrementAndGet() != 1) {
                problems.add("two callbacks at once: " + event);
            }
            String current = Caller.current().map(Caller::id).orElse(null);
            if (!caller.equals(current)) {
                problems.add(event + " ran in the context of " + current + ", not " + caller);
            }
            threads.add(Thread.currentThread());
            events.add(event);
            spin(work);
            inside.decrementAndGet();
        }

        @Override
        public void onMessage(String message) {
            heard("message " + message);
        }

        @Override
        public void onHalfClose() {
            heard("halfClose");
        }

        @Override
        public void onReady() {
            heard("ready");
        }

        @Override
        public void onCancel() {
            heard("cancel");
        }

        @Override
        public void onComplete() {
            heard("complete");
        }
    }

    /** One served call as the handler saw it. */
    private static final class Handler implements ServerCallHandler<String, String> {
        final String caller;
        final boolean failsToStart;
        final AtomicInteger starts = new AtomicInteger();
        volatile Heard heard;
        volatile String startContext;

        Handler(String caller, boolean failsToStart) {
            this.caller = caller;
            this.failsToStart = failsToStart;
        }

        @Override
        public ServerCall.Listener<String> startCall(ServerCall<String, String> call, Metadata headers) {
            starts.incrementAndGet();
            startContext = Caller.current().map(Caller::id).orElse(null);
            if (failsToStart) {
                throw new IllegalStateException("a handler that fails to start");
            }
            heard = new Heard(caller, logUniform(ThreadLocalRandom.current(), 2_000));
            return heard;
        }
    }

    /** Holds the only seat until released. */
    private static final class Holder implements AdmissionRequest {
        volatile Ticket ticket;

        @Override
        public String flowId() {
            return "holder";
        }

        @Override
        public void start(Ticket ticket) {
            this.ticket = ticket;
        }

        @Override
        public void reject(Rejection rejection) {
            throw new AssertionError("the holder is never rejected");
        }
    }

    private final AtomicInteger cancelledInQueue = new AtomicInteger();
    private final Admission admission = Admission.builder(AdmissionConfig.builder()
                    .limit(1)
                    .levels(List.of(PriorityLevelConfig.builder(LEVEL)
                            .queues(4)
                            .handSize(1)
                            .queueLengthLimit(100)
                            .build()))
                    .maxWait(Duration.ofSeconds(60))
                    .retryPushback(Duration.ofMillis(100), Duration.ofSeconds(1))
                    .build())
            .listener(new AdmissionListener() {
                @Override
                public void rejected(String level, RejectReason reason) {
                    if (reason == RejectReason.CANCELLED) {
                        cancelledInQueue.incrementAndGet();
                    }
                }
            })
            .timer((task, delayNanos) -> () -> {}) // no queue time-outs: every call waits for its seat
            .build();
    private final ServerInterceptor interceptor;
    private final Lockstep racers = new Lockstep("transport", "dispatching");

    DeferredReplayHammerTests() {
        Map<Criticality, String> levels = new EnumMap<>(Criticality.class);
        for (Criticality criticality : Criticality.values()) {
            levels.put(criticality, LEVEL);
        }
        interceptor = AdmissionInterceptors.server(admission)
                .policy(CallerPolicy.builder().criticalityLevels(levels).build())
                .build();
    }

    @AfterEach
    void stop() {
        racers.close();
    }

    /** 1 to {@code max}, each order of magnitude as likely: the race's windows are of every size. */
    private static int logUniform(ThreadLocalRandom random, int max) {
        return (int) Math.exp(random.nextDouble() * Math.log(max)) + 1;
    }

    /** What the transport reports, in order: ready and messages, maybe a half-close, then cancel or complete. */
    private static List<String> script(ThreadLocalRandom random, boolean cancels) {
        List<String> events = new ArrayList<>();
        if (random.nextBoolean()) {
            events.add("ready");
        }
        int messages = random.nextInt(4);
        for (int i = 0; i < messages; i++) {
            events.add("message m" + i);
            if (random.nextInt(4) == 0) {
                events.add("ready");
            }
        }
        if (!cancels || random.nextBoolean()) {
            events.add("halfClose");
        }
        events.add(cancels ? "cancel" : "complete");
        return events;
    }

    private static void deliver(ServerCall.Listener<String> listener, String event) {
        switch (event) {
            case "ready" -> listener.onReady();
            case "halfClose" -> listener.onHalfClose();
            case "cancel" -> listener.onCancel();
            case "complete" -> listener.onComplete();
            default -> listener.onMessage(event.substring("message ".length()));
        }
    }

    /** Counts what happened over the rounds, to show the race was really run. */
    private static final class Tally {
        int replayedAndPassedThrough;
        int allReplayed;
        int cancelledInQueue;
        int failedToStart;
        int rounds;
    }

    private void hammer(double cancelShare, double failToStartShare, Tally tally) throws Exception {
        Admission.Level level = admission.level(LEVEL);
        ThreadLocalRandom random = ThreadLocalRandom.current();
        for (int round = 0; round < ITERATIONS; round++) {
            String callerId = "caller-" + round;
            boolean cancels = random.nextDouble() < cancelShare;
            Handler handler = new Handler(callerId, random.nextDouble() < failToStartShare);
            List<String> script = script(random, cancels);
            FakeCall call = new FakeCall();
            Metadata headers = new Metadata();
            headers.put(Caller.CALLER_KEY, callerId);
            int cancelsBefore = cancelledInQueue.get();

            Holder holder = new Holder();
            Ticket holderTicket = admission.offer(level, 1_000_000_000L, holder);
            assertThat(holder.ticket)
                    .as("the seat is free at the start of round %d", round)
                    .isSameAs(holderTicket);
            ServerCall.Listener<String> listener = interceptor.interceptCall(call, headers, handler);
            assertThat(level.inQueue()).isEqualTo(1);

            // The transport reports a random number of the events, waits until the seat is being
            // freed, and reports the rest a few microseconds apart: the handler's start and the
            // replay land among them.
            int beforeRelease = random.nextInt(script.size() + 1); // size: all of them first
            int eventGap = logUniform(random, 4_000);
            int releaseJitter = 1 + random.nextInt(300);
            AtomicBoolean releasing = new AtomicBoolean();
            racers.race(
                    () -> {
                        for (int i = 0; i < script.size(); i++) {
                            if (i == beforeRelease) {
                                waitFor(releasing::get);
                            }
                            spin(eventGap);
                            deliver(listener, script.get(i));
                        }
                    },
                    () -> {
                        spin(releaseJitter);
                        releasing.set(true);
                        holderTicket.release();
                    });
            tally.rounds++;
            String round0 = "round " + round + ", script " + script;
            if (handler.starts.get() == 0) {
                // Only a call cancelled while it waited never starts.
                assertThat(cancels)
                        .as(round0 + ": a call that is not cancelled starts")
                        .isTrue();
                assertThat(cancelledInQueue.get())
                        .as(round0 + ": left its queue")
                        .isEqualTo(cancelsBefore + 1);
                assertThat(call.closes).as(round0).isEmpty();
                tally.cancelledInQueue++;
            } else if (handler.failsToStart) {
                assertThat(handler.starts).as(round0).hasValue(1);
                assertThat(call.closes).as(round0 + ": closed once").hasSize(1);
                assertThat(call.closes.peek().getCode()).isEqualTo(Status.Code.UNKNOWN);
                tally.failedToStart++;
            } else {
                Heard heard = handler.heard;
                assertThat(handler.starts).as(round0).hasValue(1);
                assertThat(handler.startContext)
                        .as(round0 + ": started in the call's context")
                        .isEqualTo(callerId);
                assertThat(heard.problems).as(round0).isEmpty();
                assertThat(new ArrayList<>(heard.events))
                        .as(round0 + ": what the handler heard")
                        .containsExactlyElementsOf(script);
                assertThat(cancelledInQueue.get())
                        .as(round0 + ": not counted as cancelled in its queue")
                        .isEqualTo(cancelsBefore);
                assertThat(call.closes)
                        .as(round0 + ": admission does not close a call it started")
                        .isEmpty();
                boolean onDispatcher = heard.threads.contains(racers.secondThread());
                boolean onTransport = heard.threads.contains(racers.firstThread());
                if (onDispatcher && onTransport) {
                    tally.replayedAndPassedThrough++;
                } else if (onDispatcher) {
                    tally.allReplayed++;
                }
            }
            assertThat(level.executingSeats()).as(round0 + ": seat freed").isZero();
            assertThat(level.inQueue()).as(round0 + ": queue empty").isZero();
        }
        System.out.printf(
                "deferred replay hammer: %d rounds, %d partly replayed and partly passed through, "
                        + "%d all replayed, %d cancelled in the queue, %d failed to start%n",
                tally.rounds,
                tally.replayedAndPassedThrough,
                tally.allReplayed,
                tally.cancelledInQueue,
                tally.failedToStart);
    }

    /**
     * Rounds of the hammer (each checking every rule) until the interleavings a test is about have
     * all happened: with one core free they take more rounds to come, never a different outcome.
     */
    private void hammerUntil(
            double cancelShare, double failShare, Tally tally, java.util.function.BooleanSupplier covered)
            throws Exception {
        for (int batch = 0; batch < MAX_BATCHES && (batch == 0 || !covered.getAsBoolean()); batch++) {
            hammer(cancelShare, failShare, tally);
        }
    }

    @Test
    void everyEventReachesTheHandlerOnceInTransportOrderWhileItStartsOnAnotherThread() throws Exception {
        Tally tally = new Tally();
        hammerUntil(0.0, 0.0, tally, () -> tally.replayedAndPassedThrough > 0 && tally.allReplayed > 0);
        // The race was run: some rounds had events replayed on the dispatcher and then passed straight
        // through on the transport thread, the interleaving where order is easiest to lose.
        assertThat(tally.replayedAndPassedThrough)
                .as("rounds split between replay and pass-through")
                .isPositive();
        assertThat(tally.allReplayed).as("rounds entirely replayed").isPositive();
    }

    @Test
    void aCancelRacingTheStartEitherLeavesTheQueueOrReachesTheStartedHandler() throws Exception {
        Tally tally = new Tally();
        hammerUntil(1.0, 0.0, tally, () -> tally.cancelledInQueue > 0 && tally.rounds > tally.cancelledInQueue);
        assertThat(tally.cancelledInQueue).as("cancelled before the seat came").isPositive();
        assertThat(tally.rounds - tally.cancelledInQueue)
                .as("cancelled after the handler started")
                .isPositive();
    }

    @Test
    void aHandlerThatFailsToStartWhileEventsArriveEndsItsCallOnceAndFreesItsSeat() throws Exception {
        Tally tally = new Tally();
        hammerUntil(0.5, 0.5, tally, () -> tally.failedToStart > 0);
        assertThat(tally.failedToStart).isPositive();
    }
}
