package dev.gdsloader.service.server;

import dev.gdsloader.service.protocol.Part;
import dev.gdsloader.service.protocol.Request;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Executor;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;

/**
 * Sessions kept for a short while after their call, so that the same client's next stream of the same request reuses
 * the loader, its ring of slots and its threads instead of building them again (what PyTorch's
 * {@code persistent_workers} does for a DataLoader; service/README.md, "Sessions across epochs"). Two kinds are parked:
 * <ul>
 *   <li>a {@code DoGet} that sent its whole epoch: parked for the request of the next epoch (the same dataset, options,
 *       delivery and cluster part, epoch + 1, no state); its loader starts that epoch at once, on the cleanup executor,
 *       once gRPC has released the last epoch's batches ({@link Session#prestart()}), so the ring is full when the
 *       client asks;</li>
 *   <li>a {@code GetFlightInfo}'s session on a single server: parked for the request it described, which is what the
 *       client's first {@code DoGet} or {@code DoExchange} asks for.</li>
 * </ul>
 * A session is parked under its {@link Key}: the request, the cluster part and the caller's peer identity (the bearer
 * token's, or empty without authentication). Two clients with equal requests get the same batches, so taking the other's
 * parked session hands out nothing that a fresh session would not.
 *
 * <p>Bounds: a parked session is freed when no stream takes it within the linger ({@link PrefetchServer.Builder#sessionLinger},
 * default {@value PrefetchServer#DEFAULT_SESSION_LINGER_MILLIS} ms), when the server needs its memory for a new session
 * ({@link #evictAll}), and when the server closes ({@link #close()}); at most {@code capacity} are parked (parking one
 * more frees the one parked longest). Parked sessions hold their ring in the server's budget but are not streams: they count against no
 * session limit.
 *
 * <p>Ownership: {@link #park} takes over the caller's hold on the session; {@link #take} hands a hold back. Thread-safe.
 */
final class ParkedSessions implements AutoCloseable {
    /**
     * What a parked session serves.
     *
     * @param request the request it serves next
     * @param part its cluster part, or null on a single server
     * @param peer the caller's peer identity ({@code CallContext.peerIdentity()}, empty without authentication)
     */
    record Key(Request request, Part part, String peer) {
    }

    private final long lingerMillis;
    private final int capacity;
    private final Executor cleanup;
    /** Oldest first; guarded by this. */
    private final Map<Key, Session> parked = new LinkedHashMap<>();
    private final ScheduledExecutorService timer;
    private boolean closed;

    /**
     * @param linger how long an unclaimed session stays; zero parks nothing
     * @param capacity the most sessions parked at once, &gt; 0
     * @param cleanup where parked sessions start their next epoch
     */
    ParkedSessions(Duration linger, int capacity, Executor cleanup) {
        this.lingerMillis = linger.toMillis();
        this.capacity = capacity;
        this.cleanup = cleanup;
        this.timer = lingerMillis == 0 ? null : Executors.newSingleThreadScheduledExecutor(
                r -> Thread.ofPlatform().daemon().name("gdsloader-parked-sessions").unstarted(r));
    }

    /**
     * Parks {@code s} under {@code key}, taking over the caller's hold; frees it at once instead when parking is off or
     * the server is closing. A session parked under the same key before is freed, and so is the one parked longest when
     * {@code capacity} sessions are parked already.
     *
     * @param key what the session serves next
     * @param s the session, held by the caller
     * @param startNextEpoch start the loader's next epoch now ({@link Session#prestart()})
     */
    @SuppressWarnings("FutureReturnValueIgnored") // the expiry is never cancelled: a stale one finds the session gone
    void park(Key key, Session s, boolean startNextEpoch) {
        Session replaced;
        Session oldest = null;
        synchronized (this) {
            if (closed || timer == null) {
                s.unhold();
                return;
            }
            if (parked.size() >= capacity && !parked.containsKey(key)) {
                var first = parked.entrySet().iterator();
                oldest = first.next().getValue(); // the longest parked is the least likely to be asked for
                first.remove();
            }
            s.park();
            replaced = parked.put(key, s);
        }
        if (oldest != null) {
            release(oldest);
        }
        if (replaced != null) {
            release(replaced);
        }
        if (startNextEpoch) {
            cleanup.execute(s::prestart);
        }
        timer.schedule(() -> expire(key, s), lingerMillis, TimeUnit.MILLISECONDS);
    }

    /**
     * @param key what a new stream asks for
     * @return the session parked under it, now held by the caller, or null
     */
    Session take(Key key) {
        Session s;
        synchronized (this) {
            s = parked.remove(key);
        }
        if (s != null) {
            s.unpark();
        }
        return s;
    }

    /**
     * Frees every parked session and waits until they are freed (their memory back in the server's allocator).
     *
     * @param millis the longest wait
     * @return how many were parked
     * @throws InterruptedException if interrupted while waiting
     */
    int evictAll(long millis) throws InterruptedException {
        List<Session> all;
        synchronized (this) {
            all = new ArrayList<>(parked.values());
            parked.clear();
        }
        all.forEach(ParkedSessions::release);
        long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(millis);
        for (Session s : all) {
            s.awaitFreed(Math.max(0, TimeUnit.NANOSECONDS.toMillis(deadline - System.nanoTime())));
        }
        return all.size();
    }

    /** @return sessions parked now */
    synchronized int size() {
        return parked.size();
    }

    private void expire(Key key, Session s) {
        synchronized (this) {
            if (!parked.remove(key, s)) {
                return; // taken, replaced or evicted already
            }
        }
        release(s);
    }

    private static void release(Session s) {
        s.unpark();
        s.unhold();
    }

    /** Parks nothing more and frees every parked session (without waiting); idempotent. */
    @Override
    public void close() {
        List<Session> all;
        synchronized (this) {
            closed = true;
            all = new ArrayList<>(parked.values());
            parked.clear();
        }
        all.forEach(ParkedSessions::release);
        if (timer != null) {
            timer.shutdownNow();
        }
    }
}
