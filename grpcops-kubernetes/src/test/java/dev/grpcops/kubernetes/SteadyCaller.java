package dev.grpcops.kubernetes;

import dev.grpcops.proto.whoami.v1.WhoAmIGrpc;
import dev.grpcops.proto.whoami.v1.WhoRequest;
import io.grpc.ManagedChannel;
import io.grpc.StatusRuntimeException;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

/** Calls Who on one channel, one call after another on its own thread, until closed: steady traffic. */
final class SteadyCaller implements AutoCloseable {

    private final ManagedChannel channel;
    private final Thread thread;
    private volatile boolean running = true;
    final AtomicInteger ok = new AtomicInteger();
    final AtomicInteger failed = new AtomicInteger();
    final Map<String, AtomicLong> lastAnswerNanos = new ConcurrentHashMap<>();
    final Map<String, Long> firstAnswerNanos = new ConcurrentHashMap<>();
    /** The failures, with the pods' call counts before them: what a failed assertion shows. */
    final java.util.Queue<String> failures = new java.util.concurrent.ConcurrentLinkedQueue<>();

    volatile StatusRuntimeException lastFailure;

    SteadyCaller(ManagedChannel channel) {
        this.channel = channel;
        this.thread = new Thread(this::run, "caller");
        thread.setDaemon(true);
        thread.start();
    }

    private void run() {
        while (running) {
            try {
                String pod = WhoAmIGrpc.newBlockingStub(channel)
                        .withDeadlineAfter(5, TimeUnit.SECONDS)
                        .who(WhoRequest.getDefaultInstance())
                        .getPod();
                long now = System.nanoTime();
                firstAnswerNanos.putIfAbsent(pod, now);
                lastAnswerNanos.computeIfAbsent(pod, p -> new AtomicLong()).set(now);
                ok.incrementAndGet();
            } catch (StatusRuntimeException e) {
                lastFailure = e;
                if (failures.size() < 10) {
                    failures.add(e.getStatus() + " after " + ok.get() + " calls");
                }
                failed.incrementAndGet();
            }
        }
    }

    /** When {@code pod} last answered (System.nanoTime), or Long.MIN_VALUE if never. */
    long lastAnswer(String pod) {
        AtomicLong last = lastAnswerNanos.get(pod);
        return last == null ? Long.MIN_VALUE : last.get();
    }

    @Override
    public void close() throws InterruptedException {
        running = false;
        thread.join(10_000);
    }
}
