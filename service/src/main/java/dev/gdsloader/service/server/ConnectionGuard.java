package dev.gdsloader.service.server;

import dev.gdsloader.service.protocol.ErrorCodes;
import io.grpc.netty.NettyServerBuilder;
import io.netty.channel.Channel;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.socket.nio.NioServerSocketChannel;
import io.netty.channel.socket.nio.NioSocketChannel;
import io.netty.handler.timeout.IdleState;
import io.netty.handler.timeout.IdleStateEvent;
import io.netty.handler.timeout.IdleStateHandler;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.SocketAddress;
import java.nio.channels.SocketChannel;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.logging.Level;
import java.util.logging.Logger;

/**
 * The connection limits of {@link ServerLimits} on the server's gRPC transport ({@link #configure}, from the server's
 * Flight {@code grpc.builderConsumer} transport hint, whose event loops the server owns).
 *
 * <ul>
 *   <li>Connections: the server socket is a {@link NioServerSocketChannel} that keeps the connections it accepted and
 *       has not seen closed, in the order accepted, each marked authenticated once a call on it passed authentication
 *       ({@link CallLimits} tells {@link #authenticated}). A connection that would go past
 *       {@link ServerLimits#connectionsPerAddress()} from its address, or past {@link ServerLimits#connections()} on the
 *       server, closes the oldest connection of that scope that has not authenticated (so a flood of sockets that
 *       never authenticate cannot keep an authenticated client out); where every one of them has, the new connection
 *       is refused: it still reaches gRPC, whose every call on it {@link CallLimits} ends RESOURCE_EXHAUSTED naming the
 *       limit ({@link #refusal}), and it is closed {@value #REFUSED_MILLIS} ms after it was accepted. At most
 *       {@link ServerLimits#connections()} refused connections are kept so at once; more are closed at once, without a
 *       word.</li>
 *   <li>Authentication: an admitted connection that has not authenticated {@link ServerLimits#authTimeout()} after it
 *       was accepted is closed.</li>
 *   <li>Idle: every admitted connection that has read nothing for {@link ServerLimits#idleTimeout()} while no call is in
 *       progress on it ({@link CallLimits#callsOn}) is closed: a half-sent preface or frame cannot hold it. gRPC's
 *       max-connection-idle (GOAWAY for a connection without calls) and keepalive (a ping after the idle time without
 *       a byte, the connection closed if unanswered) cover connections with HTTP/2 up.</li>
 *   <li>Calls: {@link CallLimits} as a server interceptor.</li>
 * </ul>
 *
 * <p>Owns nothing that needs closing: connections are Netty's, closed with the server's event loops. Thread-safe:
 * admissions and closes are serialised on this object (one accepting thread, the boss loop; closes on any loop).
 */
final class ConnectionGuard {
    private static final Logger LOG = Logger.getLogger(ConnectionGuard.class.getName());
    /** How long a refused connection stays open to be told why, ms. */
    static final long REFUSED_MILLIS = 1_000;

    private final ServerLimits limits;
    private final CallLimits calls;
    /** Admitted connections not yet closed, oldest first; guarded by this. */
    private final LinkedHashMap<Channel, Conn> admitted = new LinkedHashMap<>();
    /** Admitted connections by client address; guarded by this. */
    private final Map<InetAddress, Integer> perAddress = new HashMap<>();
    /** Every connection not yet closed, admitted or refused, by remote address (what gRPC's calls carry). */
    private final Map<SocketAddress, Conn> byRemote = new ConcurrentHashMap<>();
    private final AtomicInteger refused = new AtomicInteger();
    private final AtomicLong acceptedTotal = new AtomicLong();
    private final AtomicLong refusedTotal = new AtomicLong();
    private final AtomicLong closedTotal = new AtomicLong();

    /** One accepted connection. */
    private static final class Conn {
        final Channel channel;
        final InetAddress address;
        /** Why it is refused (the RESOURCE_EXHAUSTED message), or null if admitted. */
        final String refusal;
        volatile boolean authenticated;
        /** Closed for a newer connection; one accepted in the same read, not yet on its event loop, closes as it starts. */
        volatile boolean shed;

        Conn(Channel channel, InetAddress address, String refusal) {
            this.channel = channel;
            this.address = address;
            this.refusal = refusal;
        }
    }

    ConnectionGuard(ServerLimits limits) {
        this.limits = limits;
        this.calls = new CallLimits(limits, this);
    }

    /** @return connections open now (admitted and not yet closed), refused ones not counted */
    synchronized int connections() {
        return admitted.size();
    }

    /** @return connections accepted since the server started, admitted or refused (tests wait on it) */
    long acceptedTotal() {
        return acceptedTotal.get();
    }

    /** @return connections closed since the server started, admitted or refused (tests wait on it) */
    long closedTotal() {
        return closedTotal.get();
    }

    /** @return connections refused since the server started (tests wait on it) */
    long refusedTotal() {
        return refusedTotal.get();
    }

    /** @return admitted connections open now that have authenticated */
    synchronized int authenticatedConnections() {
        return (int) admitted.values().stream().filter(c -> c.authenticated).count();
    }

    /** @return the connections open now (admitted and not yet closed), a snapshot; refused ones not included */
    synchronized List<Channel> openConnections() {
        return List.copyOf(admitted.keySet());
    }

    /** @return the per-call limits */
    CallLimits calls() {
        return calls;
    }

    /**
     * A call on the connection from {@code remote} passed authentication: the connection is kept past
     * {@link ServerLimits#authTimeout()} and is no longer the first to be closed for a new one.
     *
     * @param remote the connection's remote address
     */
    void authenticated(SocketAddress remote) {
        Conn c = remote == null ? null : byRemote.get(remote);
        if (c != null) {
            c.authenticated = true;
        }
    }

    /**
     * @param remote a connection's remote address
     * @return why every call on it is refused (RESOURCE_EXHAUSTED, naming the limit), or null if it was admitted
     */
    String refusal(SocketAddress remote) {
        Conn c = remote == null ? null : byRemote.get(remote);
        return c == null ? null : c.refusal;
    }

    /**
     * @param nb Flight's gRPC server builder, whose event loops are set (NIO): the counting acceptor (replacing the
     *     channel type), idle/keepalive settings and call limits go on it
     */
    void configure(NettyServerBuilder nb) {
        long idle = limits.idleTimeout().toMillis();
        nb.channelFactory(Acceptor::new)
                .maxConnectionIdle(idle, TimeUnit.MILLISECONDS)
                .keepAliveTime(idle, TimeUnit.MILLISECONDS)
                .keepAliveTimeout(Math.min(idle, 20_000), TimeUnit.MILLISECONDS)
                .intercept(calls);
    }

    /**
     * Admits {@code c} if the limits allow, closing the oldest unauthenticated connection of the scope it would exceed.
     *
     * @return null if admitted, else the refusal naming the limit
     */
    private String admit(Conn c) {
        Conn shed;
        synchronized (this) {
            shed = null;
            String refusal = null;
            if (c.address != null && perAddress.getOrDefault(c.address, 0) >= limits.connectionsPerAddress()) {
                shed = oldestUnauthenticated(c.address);
                if (shed == null) {
                    refusal = ErrorCodes.CONNECTION_LIMIT + ": " + limits.connectionsPerAddress() + " authenticated connections at once from "
                            + c.address.getHostAddress() + " (ServerLimits.connectionsPerAddress, serve --max-connections-per-address)";
                }
            } else if (admitted.size() >= limits.connections()) {
                shed = oldestUnauthenticated(null);
                if (shed == null) {
                    refusal = ErrorCodes.CONNECTION_LIMIT + ": " + limits.connections() + " authenticated connections at once on this "
                            + "server (ServerLimits.connections, serve --max-connections)";
                }
            }
            if (refusal != null) {
                return refusal;
            }
            if (shed != null) {
                forget(shed);
            }
            admitted.put(c.channel, c);
            if (c.address != null) {
                perAddress.merge(c.address, 1, Integer::sum);
            }
        }
        if (shed != null) {
            Conn s = shed;
            LOG.fine(() -> "gdsloader: closing connection " + s.channel.remoteAddress() + ", not authenticated, for a new one");
            s.shed = true; // before the check: one registered after it sees the mark as it becomes active
            if (s.channel.isRegistered()) {
                close(s.channel);
            }
        }
        return null;
    }

    /** @return the oldest admitted connection (from {@code address}, or any if null) that has not authenticated */
    private Conn oldestUnauthenticated(InetAddress address) {
        for (Conn c : admitted.values()) {
            if (!c.authenticated && (address == null || address.equals(c.address))) {
                return c;
            }
        }
        return null;
    }

    /** Removes an admitted connection from the counts (idempotent). */
    private synchronized void forget(Conn c) {
        if (admitted.remove(c.channel) != null && c.address != null) {
            perAddress.computeIfPresent(c.address, (a, n) -> n <= 1 ? null : n - 1);
        }
    }

    @SuppressWarnings("FutureReturnValueIgnored") // Netty: the outcome is the channel's close
    private static void close(Channel ch) {
        ch.close();
    }

    /** The server socket: counts, limits and watches the connections it accepts. */
    private final class Acceptor extends NioServerSocketChannel {
        @Override
        protected int doReadMessages(List<Object> buf) throws Exception {
            SocketChannel ch = javaChannel().accept();
            if (ch == null) {
                return 0;
            }
            acceptedTotal.incrementAndGet();
            Conn admittedConn = null;
            try {
                NioSocketChannel child = new NioSocketChannel(this, ch);
                SocketAddress remote = child.remoteAddress();
                InetAddress address = remote instanceof InetSocketAddress a ? a.getAddress() : null;
                Conn probe = new Conn(child, address, null);
                String refusal = admit(probe);
                Conn c = probe;
                if (refusal == null) {
                    admittedConn = probe;
                } else {
                    refusedTotal.incrementAndGet();
                    if (refused.incrementAndGet() > limits.connections()) { // too many being told already: no word
                        refused.decrementAndGet();
                        ch.close();
                        return 0;
                    }
                    c = new Conn(child, address, refusal);
                    LOG.fine(() -> "gdsloader: refusing connection " + remote + ": " + refusal);
                }
                Conn conn = c;
                if (remote != null) {
                    byRemote.put(remote, conn);
                }
                child.closeFuture().addListener(f -> {
                    closedTotal.incrementAndGet();
                    if (remote != null) {
                        byRemote.remove(remote, conn);
                    }
                    if (conn.refusal != null) {
                        refused.decrementAndGet();
                    } else {
                        forget(conn);
                    }
                });
                child.pipeline().addFirst("gdsloader-idle", new IdleCloser());
                child.pipeline().addFirst("gdsloader-deadline", new Deadline(conn));
                child.pipeline().addFirst("gdsloader-direct-writes", DirectWrites.INSTANCE); // next to the socket
                buf.add(child);
                return 1;
            } catch (RuntimeException | Error e) {
                LOG.log(Level.WARNING, "gdsloader: could not take a connection", e);
                if (admittedConn != null) {
                    forget(admittedConn); // idempotent, if its close listener also runs
                }
                ch.close();
                return 0;
            }
        }
    }

    /**
     * Closes a refused connection {@value #REFUSED_MILLIS} ms after it became active, an admitted one that has not
     * authenticated {@link ServerLimits#authTimeout()} after, and one shed before it became active at once.
     */
    private final class Deadline extends ChannelInboundHandlerAdapter {
        private final Conn conn;

        Deadline(Conn conn) {
            this.conn = conn;
        }

        @Override
        @SuppressWarnings("FutureReturnValueIgnored") // Netty: the outcome is the channel's close
        public void channelActive(ChannelHandlerContext ctx) throws Exception {
            if (conn.shed) { // closed for a newer connection before it reached its event loop
                ctx.close();
                return;
            }
            long millis = conn.refusal != null ? REFUSED_MILLIS : limits.authTimeout().toMillis();
            ctx.executor().schedule(() -> {
                if (conn.refusal != null || !conn.authenticated) {
                    LOG.fine(() -> "gdsloader: closing connection " + ctx.channel().remoteAddress() + ": "
                            + (conn.refusal != null ? conn.refusal : "not authenticated within " + millis + " ms"));
                    ctx.close();
                }
            }, millis, TimeUnit.MILLISECONDS);
            super.channelActive(ctx);
        }
    }

    /** Closes a connection that has read nothing for the idle timeout while it has no call in progress. */
    private final class IdleCloser extends IdleStateHandler {
        IdleCloser() {
            super(limits.idleTimeout().toMillis(), 0, 0, TimeUnit.MILLISECONDS);
        }

        @Override
        @SuppressWarnings("FutureReturnValueIgnored") // Netty: the outcome is in the promise passed, or the channel's close
        protected void channelIdle(ChannelHandlerContext ctx, IdleStateEvent evt) {
            if (evt.state() == IdleState.READER_IDLE && calls.callsOn(ctx.channel().remoteAddress()) == 0) {
                LOG.fine(() -> "gdsloader: closing connection " + ctx.channel().remoteAddress() + ": nothing read for "
                        + limits.idleTimeout().toMillis() + " ms and no call in progress");
                ctx.close();
            }
        }
    }
}
