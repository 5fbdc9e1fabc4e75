package dev.gdsloader.service.server;

import java.time.Duration;
import java.util.Objects;

/**
 * What one {@link PrefetchServer} gives its clients at most (service/README.md, "Limits"), with defaults for a server
 * shared by a few training jobs. Immutable; each {@code withX} returns a checked copy. Thread-safe.
 *
 * <ul>
 *   <li>{@link #connections()} TCP connections open at once (default 256): one more is closed as soon as it is
 *       accepted, after an HTTP/2 GOAWAY naming the limit.</li>
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
 * </ul>
 */
public final class ServerLimits {
    private static final ServerLimits DEFAULTS = new ServerLimits(256, 64, 16, 32, Duration.ofSeconds(60), 1 << 20, 4L << 30);

    private final int connections;
    private final int sessions;
    private final int sessionsPerClient;
    private final int callsPerConnection;
    private final Duration idleTimeout;
    private final int maxMessageBytes;
    private final long memoryBudget;

    private ServerLimits(int connections, int sessions, int sessionsPerClient, int callsPerConnection, Duration idleTimeout,
                         int maxMessageBytes, long memoryBudget) {
        this.connections = positive("connections", connections);
        this.sessions = positive("sessions", sessions);
        this.sessionsPerClient = positive("sessionsPerClient", sessionsPerClient);
        this.callsPerConnection = positive("callsPerConnection", callsPerConnection);
        Objects.requireNonNull(idleTimeout, "idleTimeout");
        if (idleTimeout.toMillis() < 1) {
            throw new IllegalArgumentException("limit idleTimeout must be at least 1 ms, got " + idleTimeout);
        }
        this.idleTimeout = idleTimeout;
        this.maxMessageBytes = positive("maxMessageBytes", maxMessageBytes);
        if (memoryBudget <= 0) {
            throw new IllegalArgumentException("limit memoryBudget must be > 0 bytes, got " + memoryBudget);
        }
        this.memoryBudget = memoryBudget;
    }

    private static int positive(String name, int v) {
        if (v <= 0) {
            throw new IllegalArgumentException("limit " + name + " must be > 0, got " + v);
        }
        return v;
    }

    /** @return the defaults: 256 connections, 64 sessions, 16 per client, 32 calls per connection, 60 s idle, 1 MiB, 4 GiB */
    public static ServerLimits defaults() {
        return DEFAULTS;
    }

    /** @return TCP connections open at once */
    public int connections() {
        return connections;
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

    /**
     * @param n TCP connections open at once, &gt; 0
     * @return a copy with it
     * @throws IllegalArgumentException if not &gt; 0
     */
    public ServerLimits withConnections(int n) {
        return new ServerLimits(n, sessions, sessionsPerClient, callsPerConnection, idleTimeout, maxMessageBytes, memoryBudget);
    }

    /**
     * @param n streams in progress on the server, &gt; 0
     * @return a copy with it
     * @throws IllegalArgumentException if not &gt; 0
     */
    public ServerLimits withSessions(int n) {
        return new ServerLimits(connections, n, sessionsPerClient, callsPerConnection, idleTimeout, maxMessageBytes, memoryBudget);
    }

    /**
     * @param n streams in progress from one client address, &gt; 0
     * @return a copy with it
     * @throws IllegalArgumentException if not &gt; 0
     */
    public ServerLimits withSessionsPerClient(int n) {
        return new ServerLimits(connections, sessions, n, callsPerConnection, idleTimeout, maxMessageBytes, memoryBudget);
    }

    /**
     * @param n calls in progress on one connection, &gt; 0
     * @return a copy with it
     * @throws IllegalArgumentException if not &gt; 0
     */
    public ServerLimits withCallsPerConnection(int n) {
        return new ServerLimits(connections, sessions, sessionsPerClient, n, idleTimeout, maxMessageBytes, memoryBudget);
    }

    /**
     * @param idle the idle timeout, at least 1 ms
     * @return a copy with it
     * @throws IllegalArgumentException if shorter than 1 ms
     */
    public ServerLimits withIdleTimeout(Duration idle) {
        return new ServerLimits(connections, sessions, sessionsPerClient, callsPerConnection, idle, maxMessageBytes, memoryBudget);
    }

    /**
     * @param bytes the largest message a client may send, &gt; 0
     * @return a copy with it
     * @throws IllegalArgumentException if not &gt; 0
     */
    public ServerLimits withMaxMessageBytes(int bytes) {
        return new ServerLimits(connections, sessions, sessionsPerClient, callsPerConnection, idleTimeout, bytes, memoryBudget);
    }

    /**
     * @param bytes native memory for all sessions' loaders, host and device each, &gt; 0
     * @return a copy with it
     * @throws IllegalArgumentException if not &gt; 0
     */
    public ServerLimits withMemoryBudget(long bytes) {
        return new ServerLimits(connections, sessions, sessionsPerClient, callsPerConnection, idleTimeout, maxMessageBytes, bytes);
    }

    @Override
    public String toString() {
        return "connections " + connections + ", sessions " + sessions + ", sessions per client " + sessionsPerClient
                + ", calls per connection " + callsPerConnection + ", idle timeout " + idleTimeout.toMillis() + " ms, largest message "
                + maxMessageBytes + " B, memory budget " + memoryBudget + " B";
    }
}
