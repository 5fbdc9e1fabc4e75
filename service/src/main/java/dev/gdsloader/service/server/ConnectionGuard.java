package dev.gdsloader.service.server;

import io.grpc.netty.NettyServerBuilder;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.Channel;
import io.netty.channel.ChannelFutureListener;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.socket.nio.NioServerSocketChannel;
import io.netty.channel.socket.nio.NioSocketChannel;
import io.netty.handler.timeout.IdleState;
import io.netty.handler.timeout.IdleStateEvent;
import io.netty.handler.timeout.IdleStateHandler;
import io.netty.util.ReferenceCountUtil;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.logging.Level;
import java.util.logging.Logger;

/**
 * The connection limits of {@link ServerLimits} on the server's gRPC transport ({@link #configure}, from the server's
 * Flight {@code grpc.builderConsumer} transport hint, whose event loops the server owns).
 *
 * <ul>
 *   <li>Connections: the server socket is a {@link NioServerSocketChannel} that counts the connections it accepted
 *       and has not seen closed; one beyond {@link ServerLimits#connections()} gets an HTTP/2 SETTINGS and GOAWAY
 *       (ENHANCE_YOUR_CALM, debug data {@code connection limit reached: N connections at once ...}, which gRPC clients
 *       show in their UNAVAILABLE status) and is closed within 1 s, without reaching gRPC.</li>
 *   <li>Idle: every admitted connection that has read nothing for {@link ServerLimits#idleTimeout()} while no call is in
 *       progress on it ({@link CallLimits#callsOn}) is closed: a half-sent preface or frame cannot hold it. gRPC's
 *       max-connection-idle (GOAWAY for a connection without calls) and keepalive (a ping after the idle time without
 *       a byte, the connection closed if unanswered) cover connections with HTTP/2 up.</li>
 *   <li>Calls: {@link CallLimits} as a server interceptor.</li>
 * </ul>
 *
 * <p>Owns nothing that needs closing: refused connections live on the acceptor's event loop (at most 1 s each).
 * Thread-safe.
 */
final class ConnectionGuard {
    private static final Logger LOG = Logger.getLogger(ConnectionGuard.class.getName());
    private static final int ENHANCE_YOUR_CALM = 0xb;

    private final ServerLimits limits;
    private final CallLimits calls;
    private final AtomicInteger open = new AtomicInteger();
    private final Set<Channel> accepted = ConcurrentHashMap.newKeySet();

    ConnectionGuard(ServerLimits limits) {
        this.limits = limits;
        this.calls = new CallLimits(limits);
    }

    /** @return connections open now (accepted and not yet closed), refused ones not counted */
    int connections() {
        return open.get();
    }

    /** @return the connections open now (accepted and not yet closed), a snapshot; refused ones not included */
    List<Channel> openConnections() {
        return List.copyOf(accepted);
    }

    /** @return the per-call limits */
    CallLimits calls() {
        return calls;
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

    private boolean admit() {
        while (true) {
            int n = open.get();
            if (n >= limits.connections()) {
                return false;
            }
            if (open.compareAndSet(n, n + 1)) {
                return true;
            }
        }
    }

    /** The server socket: counts, limits and watches the connections it accepts. */
    private final class Acceptor extends NioServerSocketChannel {
        @Override
        @SuppressWarnings("FutureReturnValueIgnored") // Netty: the outcome is in the promise passed, or the channel's close
        protected int doReadMessages(List<Object> buf) throws Exception {
            SocketChannel ch = javaChannel().accept();
            if (ch == null) {
                return 0;
            }
            boolean admitted = admit();
            try {
                NioSocketChannel child = new NioSocketChannel(this, ch);
                if (!admitted) {
                    child.pipeline().addLast(new Refuser());
                    eventLoop().register(child); // on the acceptor's loop, never handed to gRPC
                    return 0;
                }
                accepted.add(child);
                child.closeFuture().addListener(f -> {
                    accepted.remove(child);
                    open.decrementAndGet();
                });
                child.pipeline().addFirst("gdsloader-idle", new IdleCloser());
                child.pipeline().addFirst("gdsloader-direct-writes", DirectWrites.INSTANCE); // next to the socket
                buf.add(child);
                return 1;
            } catch (RuntimeException | Error e) {
                if (admitted) {
                    open.decrementAndGet();
                }
                LOG.log(Level.WARNING, "gdsloader: could not take a connection", e);
                ch.close();
                return 0;
            }
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

    /** Tells a connection beyond the limit why (HTTP/2 SETTINGS + GOAWAY), drops what it sends, closes it within 1 s. */
    private final class Refuser extends ChannelInboundHandlerAdapter {
        @Override
        @SuppressWarnings("FutureReturnValueIgnored") // Netty: the outcome is in the promise passed, or the channel's close
        public void channelActive(ChannelHandlerContext ctx) {
            LOG.fine(() -> "gdsloader: refusing connection " + ctx.channel().remoteAddress() + ": " + limits.connections()
                    + " connections open");
            byte[] debug = ("connection limit reached: " + limits.connections() + " connections at once on this server "
                    + "(ServerLimits.connections, serve --max-connections)").getBytes(StandardCharsets.US_ASCII);
            ByteBuf frames = Unpooled.buffer(9 + 9 + 8 + debug.length);
            frames.writeMedium(0).writeByte(0x4).writeByte(0).writeInt(0); // SETTINGS, empty
            frames.writeMedium(8 + debug.length).writeByte(0x7).writeByte(0).writeInt(0); // GOAWAY
            frames.writeInt(0).writeInt(ENHANCE_YOUR_CALM).writeBytes(debug);
            ctx.writeAndFlush(frames).addListener(ChannelFutureListener.CLOSE_ON_FAILURE);
            ctx.executor().schedule(() -> ctx.close(), 1, TimeUnit.SECONDS);
        }

        @Override
        public void channelRead(ChannelHandlerContext ctx, Object msg) {
            ReferenceCountUtil.release(msg);
        }

        @Override
        @SuppressWarnings("FutureReturnValueIgnored") // Netty: the outcome is in the promise passed, or the channel's close
        public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
            ctx.close();
        }
    }
}
