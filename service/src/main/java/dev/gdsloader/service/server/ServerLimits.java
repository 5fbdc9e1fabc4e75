package dev.gdsloader.service.server;

import java.time.Duration;
import java.util.Objects;

/**
 * What one {@link PrefetchServer} gives its clients at most (service/README.md, "Limits"), with defaults for a server
 * shared by a few training jobs. Immutable; each {@code withX} returns a checked copy. Thread-safe.
 *
 * <ul>
 *   <li>{@link #connections()} TCP connections open at once (default 256), {@link #connectionsPerAddress()} of them from
 *       one client address (default 64: a client holds an info and a stream connection for each of its
 *       {@link #sessionsPerClient()} sessions, and room for reconnects), authenticated ones first ({@code ConnectionGuard}): a connection that would go
 *       past either closes the oldest connection of that scope that has not authenticated yet; where every one has,
 *       the new one is refused: each of its calls ends RESOURCE_EXHAUSTED naming the limit, and it is closed.</li>
 *   <li>{@link #authTimeout()} (default 3 s): a connection that has not started a call that passed authentication
 *       (with the server's bearer token, if it has one) this long after it was accepted is closed.</li>
 *   <li>{@link #sessions()} streams (DoGet/DoExchange, one session each) in progress on the server (default 64),
 *       {@link #sessionsPerClient()} of them from one client address (default 16), {@link #callsPerConnection()} calls
 *       of any kind in progress on one connection (default 32): one more is refused RESOURCE_EXHAUSTED naming the
 *       limit and its value.</li>
 *   <li>{@link #idleTimeout()} (default 60 s): a connection without a call in progress is closed after this long
 *       (gRPC's max connection idle; a connection that sends nothing, e.g. a half-sent preface or frame, is closed
 *       outright); with calls in progress the server pings it after this long without a byte and closes it if the ping
 *       is not answered within {@code min(idleTimeout, 20 s)}.</li>
 *   <li>{@link #maxMessageBytes()} (default 1 MiB): the largest message a client may send (requests and releases are
 *       a few KiB); a larger one ends its call RESOURCE_EXHAUSTED naming both sizes. Batches sent to clients are not
 *       limited by it.</li>
 *   <li>{@link #memoryBudget()} (default 4 GiB): native memory, host and device each, for all sessions' loaders (their
 *       rings of slots) together, taken from the server's allocator; a session that does not fit is refused
 *       RESOURCE_EXHAUSTED naming the budget and what it asked for.</li>
 *   <li>What a request may ask for ({@code SessionCeilings}): its reads run on the server's one pool of
 *       {@link #ioThreads()} threads (default 16), whatever {@code ioThreads} the request names (clamped to it); a
 *       {@code prefetchDepth} above {@link #maxPrefetchDepth()} (default 16) or a batch of more than
 *       {@link #maxBatchBytes()} bytes (default 1 GiB: batch size x the bytes of a record of the columns asked for) is
 *       refused INVALID_ARGUMENT naming the ceiling.</li>
 * </ul>
 */
public final class ServerLimits {
    private static final ServerLimits DEFAULTS = new ServerLimits(new Values());

    private final int connections;
    private final int connectionsPerAddress;
    private final Duration authTimeout;
    private final int sessions;
    private final int sessionsPerClient;
    private final int callsPerConnection;
    private final Duration idleTimeout;
    private final int maxMessageBytes;
    private final long memoryBudget;
    private final int ioThreads;
    private final int maxPrefetchDepth;
    private final long maxBatchBytes;

    /** The fields of one {@code ServerLimits}, the defaults until set: what each {@code withX} copies and changes. */
    private static final class Values {
        int connections = 256;
        int connectionsPerAddress = 64;
        Duration authTimeout = Duration.ofSeconds(3);
        int sessions = 64;
        int sessionsPerClient = 16;
        int callsPerConnection = 32;
        Duration idleTimeout = Duration.ofSeconds(60);
        int maxMessageBytes = 1 << 20;
        long memoryBudget = 4L << 30;
        int ioThreads = 16;
        int maxPrefetchDepth = 16;
        long maxBatchBytes = 1L << 30;
    }

    private ServerLimits(Values v) {
        this.connections = positive("connections", v.connections);
        this.connectionsPerAddress = positive("connectionsPerAddress", v.connectionsPerAddress);
        this.authTimeout = atLeastMilli("authTimeout", v.authTimeout);
        this.sessions = positive("sessions", v.sessions);
        this.sessionsPerClient = positive("sessionsPerClient", v.sessionsPerClient);
        this.callsPerConnection = positive("callsPerConnection", v.callsPerConnection);
        this.idleTimeout = atLeastMilli("idleTimeout", v.idleTimeout);
        this.maxMessageBytes = positive("maxMessageBytes", v.maxMessageBytes);
        this.memoryBudget = positive("memoryBudget", v.memoryBudget);
        this.ioThreads = positive("ioThreads", v.ioThreads);
        if (ioThreads > MAX_IO_THREADS) {
            throw new IllegalArgumentException("limit ioThreads must be 1.." + MAX_IO_THREADS + ", got " + ioThreads);
        }
        this.maxPrefetchDepth = positive("maxPrefetchDepth", v.maxPrefetchDepth);
        this.maxBatchBytes = positive("maxBatchBytes", v.maxBatchBytes);
    }

    /** Most threads of the server's I/O pool ({@link #withIoThreads}). */
    public static final int MAX_IO_THREADS = 1024;

    private Values values() {
        Values v = new Values();
        v.connections = connections;
        v.connectionsPerAddress = connectionsPerAddress;
        v.authTimeout = authTimeout;
        v.sessions = sessions;
        v.sessionsPerClient = sessionsPerClient;
        v.callsPerConnection = callsPerConnection;
        v.idleTimeout = idleTimeout;
        v.maxMessageBytes = maxMessageBytes;
        v.memoryBudget = memoryBudget;
        v.ioThreads = ioThreads;
        v.maxPrefetchDepth = maxPrefetchDepth;
        v.maxBatchBytes = maxBatchBytes;
        return v;
    }

    private static int positive(String name, int v) {
        return (int) positive(name, (long) v);
    }

    private static long positive(String name, long v) {
        if (v <= 0) {
            throw new IllegalArgumentException("limit " + name + " must be > 0, got " + v);
        }
        return v;
    }

    private static Duration atLeastMilli(String name, Duration d) {
        Objects.requireNonNull(d, name);
        if (d.toMillis() < 1) {
            throw new IllegalArgumentException("limit " + name + " must be at least 1 ms, got " + d);
        }
        return d;
    }

    /**
     * @return the defaults: 256 connections, 64 per address, 3 s to authenticate, 64 sessions, 16 per client, 32 calls
     *     per connection, 60 s idle, 1 MiB messages, 4 GiB memory, 16 I/O threads, prefetch depth 16, 1 GiB batches
     */
    public static ServerLimits defaults() {
        return DEFAULTS;
    }

    /** @return TCP connections open at once */
    public int connections() {
        return connections;
    }

    /** @return TCP connections open at once from one client address */
    public int connectionsPerAddress() {
        return connectionsPerAddress;
    }

    /** @return how long after it was accepted a connection must have started a call that passed authentication */
    public Duration authTimeout() {
        return authTimeout;
    }

    /** @return streams (sessions) in progress on the server */
    public int sessions() {
        return sessions;
    }

    /** @return streams (sessions) in progress from one client address */
    public int sessionsPerClient() {
        return sessionsPerClient;
    }

    /** @return calls (requests) in progress on one connection */
    public int callsPerConnection() {
        return callsPerConnection;
    }

    /** @return how long a connection may stay idle (see the class comment) */
    public Duration idleTimeout() {
        return idleTimeout;
    }

    /** @return the largest message a client may send, bytes */
    public int maxMessageBytes() {
        return maxMessageBytes;
    }

    /** @return native memory for all sessions' loaders, bytes, host and device each */
    public long memoryBudget() {
        return memoryBudget;
    }

    /** @return threads of the server's one I/O pool, which every session's reads share */
    public int ioThreads() {
        return ioThreads;
    }

    /** @return the largest {@code prefetchDepth} (slots) a request may ask for */
    public int maxPrefetchDepth() {
        return maxPrefetchDepth;
    }

    /** @return the largest batch a request may ask for, bytes (batch size x bytes of a record of its columns) */
    public long maxBatchBytes() {
        return maxBatchBytes;
    }

    /**
     * @param n TCP connections open at once, &gt; 0
     * @return a copy with it
     * @throws IllegalArgumentException if not &gt; 0
     */
    public ServerLimits withConnections(int n) {
        Values v = values();
        v.connections = n;
        return new ServerLimits(v);
    }

    /**
     * @param n TCP connections open at once from one client address, &gt; 0
     * @return a copy with it
     * @throws IllegalArgumentException if not &gt; 0
     */
    public ServerLimits withConnectionsPerAddress(int n) {
        Values v = values();
        v.connectionsPerAddress = n;
        return new ServerLimits(v);
    }

    /**
     * @param timeout how long a new connection has to start a call that passes authentication, at least 1 ms
     * @return a copy with it
     * @throws IllegalArgumentException if shorter than 1 ms
     */
    public ServerLimits withAuthTimeout(Duration timeout) {
        Values v = values();
        v.authTimeout = timeout;
        return new ServerLimits(v);
    }

    /**
     * @param n streams in progress on the server, &gt; 0
     * @return a copy with it
     * @throws IllegalArgumentException if not &gt; 0
     */
    public ServerLimits withSessions(int n) {
        Values v = values();
        v.sessions = n;
        return new ServerLimits(v);
    }

    /**
     * @param n streams in progress from one client address, &gt; 0
     * @return a copy with it
     * @throws IllegalArgumentException if not &gt; 0
     */
    public ServerLimits withSessionsPerClient(int n) {
        Values v = values();
        v.sessionsPerClient = n;
        return new ServerLimits(v);
    }

    /**
     * @param n calls in progress on one connection, &gt; 0
     * @return a copy with it
     * @throws IllegalArgumentException if not &gt; 0
     */
    public ServerLimits withCallsPerConnection(int n) {
        Values v = values();
        v.callsPerConnection = n;
        return new ServerLimits(v);
    }

    /**
     * @param idle the idle timeout, at least 1 ms
     * @return a copy with it
     * @throws IllegalArgumentException if shorter than 1 ms
     */
    public ServerLimits withIdleTimeout(Duration idle) {
        Values v = values();
        v.idleTimeout = idle;
        return new ServerLimits(v);
    }

    /**
     * @param bytes the largest message a client may send, &gt; 0
     * @return a copy with it
     * @throws IllegalArgumentException if not &gt; 0
     */
    public ServerLimits withMaxMessageBytes(int bytes) {
        Values v = values();
        v.maxMessageBytes = bytes;
        return new ServerLimits(v);
    }

    /**
     * @param bytes native memory for all sessions' loaders, host and device each, &gt; 0
     * @return a copy with it
     * @throws IllegalArgumentException if not &gt; 0
     */
    public ServerLimits withMemoryBudget(long bytes) {
        Values v = values();
        v.memoryBudget = bytes;
        return new ServerLimits(v);
    }

    /**
     * @param n threads of the server's I/O pool, 1..{@value #MAX_IO_THREADS}
     * @return a copy with it
     * @throws IllegalArgumentException if out of range
     */
    public ServerLimits withIoThreads(int n) {
        Values v = values();
        v.ioThreads = n;
        return new ServerLimits(v);
    }

    /**
     * @param slots the largest prefetch depth a request may ask for, &gt; 0
     * @return a copy with it
     * @throws IllegalArgumentException if not &gt; 0
     */
    public ServerLimits withMaxPrefetchDepth(int slots) {
        Values v = values();
        v.maxPrefetchDepth = slots;
        return new ServerLimits(v);
    }

    /**
     * @param bytes the largest batch a request may ask for, &gt; 0
     * @return a copy with it
     * @throws IllegalArgumentException if not &gt; 0
     */
    public ServerLimits withMaxBatchBytes(long bytes) {
        Values v = values();
        v.maxBatchBytes = bytes;
        return new ServerLimits(v);
    }

    @Override
    public String toString() {
        return "connections " + connections + " (" + connectionsPerAddress + " per address, " + authTimeout.toMillis()
                + " ms to authenticate), sessions " + sessions + ", sessions per client " + sessionsPerClient
                + ", calls per connection " + callsPerConnection + ", idle timeout " + idleTimeout.toMillis() + " ms, largest message "
                + maxMessageBytes + " B, memory budget " + memoryBudget + " B, I/O threads " + ioThreads + ", prefetch depth <= "
                + maxPrefetchDepth + ", batch <= " + maxBatchBytes + " B";
    }
}
