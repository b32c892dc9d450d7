package dev.grpcops.admin.internal;

import com.google.errorprone.annotations.concurrent.GuardedBy;
import dev.grpcops.admin.AdminRateLimit;
import io.grpc.Status;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.function.Consumer;
import java.util.function.LongSupplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Refused admin calls per caller address, as {@link AdminRateLimit} says: which addresses are
 * refused unchecked for now, and one aggregated WARN line per address per log interval.
 *
 * <p>Bounded: at most {@code maxPeers} addresses, the least recently seen forgotten first (after
 * its unlogged count is logged). No thread: counts not logged yet are logged by the next call
 * (from any address) once their interval has passed; entries with nothing left to count or log
 * are dropped at the same time. Thread-safe; lines are logged outside the lock.
 */
public final class RefusedAdminCalls {

    private static final Logger log = LoggerFactory.getLogger(AdminAuthorizationInterceptor.class);

    private final AdminRateLimit limit;
    /** What is refused, as the log lines name it: {@code admin}, {@code ledger}. */
    private final String subject;

    private final LongSupplier nanoTime;
    private final Consumer<String> warnings;
    private final long windowNanos;
    private final long logIntervalNanos;
    /** Access order: the eldest entry is the address seen least recently. */
    @GuardedBy("this")
    private final LinkedHashMap<String, Peer> peers;
    /** Lines of evicted addresses, logged after the lock is released. */
    @GuardedBy("this")
    private final List<String> evictedLines = new ArrayList<>();

    @GuardedBy("this")
    private long nextSweep;

    /** Refused calls counted from all addresses but the loopback, in the window begun at {@link #overallWindowStart}. */
    @GuardedBy("this")
    private int overallFailures;

    @GuardedBy("this")
    private long overallWindowStart;

    /** With {@link System#nanoTime()}, logging to the admin authorization's logger. */
    public RefusedAdminCalls(AdminRateLimit limit) {
        this(limit, System::nanoTime, log::warn);
    }

    /**
     * @param nanoTime a monotonic clock in nanoseconds (tests give a fake one)
     * @param warnings where the aggregated WARN lines go
     */
    public RefusedAdminCalls(AdminRateLimit limit, LongSupplier nanoTime, Consumer<String> warnings) {
        this(limit, nanoTime, warnings, "admin");
    }

    /**
     * @param subject what is refused, as the log lines name it ({@code admin} for admin calls)
     */
    public RefusedAdminCalls(AdminRateLimit limit, LongSupplier nanoTime, Consumer<String> warnings, String subject) {
        this.limit = limit;
        this.subject = subject;
        this.nanoTime = nanoTime;
        this.warnings = warnings;
        this.windowNanos = limit.window().toNanos();
        this.logIntervalNanos = limit.logInterval().toNanos();
        this.nextSweep = nanoTime.getAsLong() + logIntervalNanos;
        this.peers = new LinkedHashMap<>(16, 0.75f, true) {
            @Override
            @GuardedBy("RefusedAdminCalls.this")
            protected boolean removeEldestEntry(Map.Entry<String, Peer> eldest) {
                if (size() <= limit.maxPeers()) {
                    return false;
                }
                if (eldest.getValue().unlogged > 0) {
                    evictedLines.add(line(eldest.getKey(), eldest.getValue(), nanoTime.getAsLong()));
                }
                return true;
            }
        };
    }

    public AdminRateLimit limit() {
        return limit;
    }

    /**
     * How long admin calls from {@code peer} are still refused unchecked (it, or every address but
     * the loopback, refused too often); {@link Duration#ZERO} if its next call is checked.
     */
    public Duration blocked(String peer) {
        List<String> lines = new ArrayList<>();
        Duration blocked;
        synchronized (this) {
            long now = nanoTime.getAsLong();
            blocked = blockedFor(peer, now);
            sweep(now, lines);
        }
        lines.forEach(warnings);
        return blocked;
    }

    @GuardedBy("this")
    private Duration blockedFor(String peer, long now) {
        long remaining = 0;
        Peer p = peers.get(peer);
        if (p != null && p.failures >= limit.maxFailures() && now - p.windowStart < windowNanos) {
            remaining = windowNanos - (now - p.windowStart);
        }
        if (!loopback(peer) && overallFailures >= limit.maxRefusedOverall() && now - overallWindowStart < windowNanos) {
            remaining = Math.max(remaining, windowNanos - (now - overallWindowStart));
        }
        return Duration.ofNanos(remaining);
    }

    /**
     * An admin call from {@code peer} while it is {@link #blocked}: refused without its credentials
     * looked at, counted in the log only; returns what it ends with.
     */
    public Status refuseUnchecked(String peer, String method, Duration blocked) {
        Status answer = tooMany(blocked);
        refused(peer, method, answer, false);
        return answer;
    }

    /** The loopback: an operator inside the pod, whom others' refused calls never lock out. */
    static boolean loopback(String peer) {
        return peer.startsWith("127.") || peer.equals("::1") || peer.equals("0:0:0:0:0:0:0:1");
    }

    /**
     * A call from {@code peer} is refused for {@code refusal} (its credentials were checked): counted
     * in one step, and what it ends with returned, {@code refusal} itself, or, while the address is
     * over the limit, {@code RESOURCE_EXHAUSTED} saying when to try again (not counted toward it).
     */
    public Status refuse(String peer, String method, Status refusal) {
        List<String> lines = new ArrayList<>();
        Status answer = refusal;
        synchronized (this) {
            long now = nanoTime.getAsLong();
            Duration blocked = blockedFor(peer, now);
            boolean over = !blocked.isZero();
            if (over) {
                answer = tooMany(blocked);
            }
            sweep(now, lines); // what is due first, as when the address's standing is looked up
            count(peer, method, answer, !over, now, lines);
        }
        lines.forEach(warnings);
        return answer;
    }

    /** What a call refused unchecked (the address, or all of them, over the limit) ends with. */
    static Status tooMany(Duration blocked) {
        long seconds = Math.max(1, (blocked.toMillis() + 999) / 1000);
        return Status.RESOURCE_EXHAUSTED.withDescription(
                "too many refused admin calls: try again in " + seconds + " s");
    }

    /**
     * A call from {@code peer} was refused with {@code status}.
     *
     * @param checked whether its credentials were looked at (it counts toward the limit), or it
     *     was refused because the address was already over the limit (it only counts in the log)
     */
    public void refused(String peer, String method, Status status, boolean checked) {
        List<String> lines = new ArrayList<>();
        synchronized (this) {
            long now = nanoTime.getAsLong();
            count(peer, method, status, checked, now, lines);
            sweep(now, lines);
        }
        lines.forEach(warnings);
    }

    @GuardedBy("this")
    private void count(String peer, String method, Status status, boolean checked, long now, List<String> lines) {
        {
            Peer p = peers.computeIfAbsent(peer, k -> new Peer());
            if (checked) {
                if (p.failures == 0 || now - p.windowStart >= windowNanos) {
                    p.windowStart = now;
                    p.failures = 0;
                }
                p.failures++;
                if (!loopback(peer)) {
                    if (overallFailures == 0 || now - overallWindowStart >= windowNanos) {
                        overallWindowStart = now;
                        overallFailures = 0;
                    }
                    if (++overallFailures == limit.maxRefusedOverall()) {
                        lines.add(subject + ": " + overallFailures + " refused calls within "
                                + seconds(windowNanos) + " s from all addresses: those from every address but"
                                + " the loopback are refused unchecked for the rest of the window");
                    }
                }
            } else {
                p.unloggedUnchecked++;
            }
            if (p.unlogged == 0) {
                p.firstUnlogged = now;
            }
            p.unlogged++;
            p.latestMethod = method;
            p.latestCode = status.getCode();
            p.latestDescription = status.getDescription();
            if (!p.everLogged || now - p.loggedAt >= logIntervalNanos) {
                lines.add(line(peer, p, now));
            }
        }
    }

    /** A call from {@code peer} had the right token: its refused calls no longer count toward the limit. */
    public void succeeded(String peer) {
        List<String> lines = new ArrayList<>();
        synchronized (this) {
            Peer p = peers.get(peer);
            if (p != null) {
                p.failures = 0;
            }
            sweep(nanoTime.getAsLong(), lines);
        }
        lines.forEach(warnings);
    }

    /** How many addresses are tracked now. */
    public synchronized int trackedPeers() {
        return peers.size();
    }

    /** Logs what is due and forgets what is over, at most once per log interval. */
    @GuardedBy("this")
    private void sweep(long now, List<String> lines) {
        lines.addAll(evictedLines);
        evictedLines.clear();
        if (now - nextSweep < 0) {
            return;
        }
        nextSweep = now + logIntervalNanos;
        for (Iterator<Map.Entry<String, Peer>> it = peers.entrySet().iterator(); it.hasNext(); ) {
            Map.Entry<String, Peer> entry = it.next();
            Peer p = entry.getValue();
            if (p.unlogged > 0 && now - p.loggedAt >= logIntervalNanos) {
                lines.add(line(entry.getKey(), p, now));
            }
            // Kept while its line is recent: a refusal soon after must not log again at once.
            boolean windowOver = p.failures == 0 || now - p.windowStart >= windowNanos;
            if (p.unlogged == 0 && windowOver && now - p.loggedAt >= logIntervalNanos) {
                it.remove();
            }
        }
    }

    /** The WARN line of {@code p}'s unlogged refused calls; marks them logged. */
    private String line(String peer, Peer p, long now) {
        StringBuilder line = new StringBuilder(subject)
                .append(": ")
                .append(p.unlogged)
                .append(" refused call")
                .append(p.unlogged == 1 ? "" : "s")
                .append(" from ")
                .append(peer);
        if (p.unlogged > 1) {
            line.append(" in the last ").append(seconds(now - p.firstUnlogged)).append(" s");
        }
        if (p.unloggedUnchecked > 0) {
            line.append(" (")
                    .append(p.unloggedUnchecked)
                    .append(" not checked: more than ")
                    .append(limit.maxFailures())
                    .append(" refused within ")
                    .append(seconds(windowNanos))
                    .append(" s)");
        }
        line.append("; latest: ").append(p.latestMethod).append(' ').append(p.latestCode);
        if (p.latestDescription != null) {
            line.append(' ').append(p.latestDescription);
        }
        p.everLogged = true;
        p.loggedAt = now;
        p.unlogged = 0;
        p.unloggedUnchecked = 0;
        return line.toString();
    }

    private static String seconds(long nanos) {
        return String.format(Locale.ROOT, "%.1f", nanos / 1e9);
    }

    /** What is known of one address: references and counters only, so entries stay small. */
    private static final class Peer {
        /** When the current window's first counted refusal happened. */
        long windowStart;
        /** Counted refusals in the current window. */
        int failures;

        boolean everLogged;
        long loggedAt;
        /** Refused calls since the last line, and how many of them were not checked. */
        int unlogged;

        int unloggedUnchecked;
        long firstUnlogged;
        String latestMethod;
        Status.Code latestCode;
        String latestDescription;
    }
}
