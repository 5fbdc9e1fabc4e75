package dev.gdsloader.service.client;

import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.channel.nio.NioIoHandler;
import io.netty.channel.socket.nio.NioSocketChannel;
import io.netty.handler.codec.AdaptiveCumulator;
import io.netty.handler.codec.ByteToMessageDecoder;
import io.netty.handler.codec.http2.Http2ConnectionHandler;
import io.netty.handler.codec.http2.Http2Settings;
import io.netty.util.concurrent.DefaultThreadFactory;

/**
 * The Netty transport of a client's connections ({@link Connection}): NIO socket channels on one process-wide group of
 * daemon event loops, each channel with a {@link Tuning} handler first in its pipeline that, once gRPC's HTTP/2
 * handler is there, changes two things about how the connection receives:
 *
 * <ul>
 *   <li><b>No copy of what is received into the decoder's buffer.</b> gRPC's HTTP/2 handler is a Netty
 *       {@link ByteToMessageDecoder} with Netty's default cumulator, which copies. A DATA frame rarely ends where a
 *       socket read (at most 64 KiB) ends, so most reads leave a partial frame; the decoder then appends the next read
 *       to it, and because gRPC still holds slices of the frames received, that append allocates a new buffer and
 *       copies the partial frame and the whole read into it ({@code ByteToMessageDecoder.expandCumulation}): about one
 *       extra copy of every byte received, on the connection's event loop (35 of its 106 Java samples in a JFR profile
 *       of {@code serve-bench}, one client). gRPC Java had its own composing cumulator for this and no longer uses it
 *       (grpc/grpc-java#12390); Netty's {@link AdaptiveCumulator} is the same idea: reads of at least
 *       {@link #COMPOSE_MIN_SIZE} bytes become components of a composite buffer, smaller ones are merged.</li>
 *   <li><b>Larger DATA frames.</b> The client sends an HTTP/2 SETTINGS frame with {@code SETTINGS_MAX_FRAME_SIZE} =
 *       {@link #MAX_FRAME_SIZE} (gRPC Java leaves it at HTTP/2's 16 KiB), so the server frames a 19 MB batch as about
 *       19 DATA frames instead of about 1160; every frame costs the server's event loop two pipeline writes and a
 *       gather entry, and the client's a frame decode and a gRPC buffer. Standard HTTP/2 (RFC 9113 6.5.2): Netty
 *       applies the size to this side's frame reader when the server acknowledges the SETTINGS, and the server frames
 *       larger only after it has read them.</li>
 * </ul>
 *
 * <p>gRPC requires an event loop group whenever a channel factory is given, so this class holds one for all clients
 * of the process: {@link #GROUP}, Netty's default number of threads (2 x the processors), daemon threads started as
 * channels are registered, never shut down (as gRPC's own shared group, whose threads are daemons too).
 * Thread-safe.
 */
final class ClientTransport {
    /** Reads of at least this many bytes are composed, smaller ones copied (gRPC's value for its own cumulator). */
    static final int COMPOSE_MIN_SIZE = 1024;
    /** The largest DATA frame payload this client accepts, bytes (HTTP/2 allows 16 KiB .. 16 MiB - 1). */
    static final int MAX_FRAME_SIZE = 1 << 20;

    /** The event loops of every client connection of this process. */
    static final MultiThreadIoEventLoopGroup GROUP = new MultiThreadIoEventLoopGroup(0,
            new DefaultThreadFactory("gdsloader-client-io", true), NioIoHandler.newFactory());

    private ClientTransport() {
    }

    /** @return a new unconnected client channel with {@link Tuning} first in its pipeline (gRPC's channel factory) */
    static NioSocketChannel newChannel() {
        NioSocketChannel ch = new NioSocketChannel();
        ch.pipeline().addFirst("gdsloader-client-tuning", new Tuning());
        return ch;
    }

    /**
     * At the first read after gRPC installed its HTTP/2 handler (after the protocol negotiation: plaintext at once, TLS
     * after the handshake; the client's connection preface is sent by then): gives that handler Netty's
     * {@link AdaptiveCumulator}, sends SETTINGS with {@link #MAX_FRAME_SIZE}, then removes itself. Passes every read on
     * unchanged. One per channel; runs on its event loop.
     */
    static final class Tuning extends ChannelInboundHandlerAdapter {
        private boolean done;

        @Override
        @SuppressWarnings("FutureReturnValueIgnored") // Netty: the outcome is in the promise passed, or the channel's close
        public void channelRead(ChannelHandlerContext ctx, Object msg) {
            if (!done) {
                Http2ConnectionHandler h2 = ctx.pipeline().get(Http2ConnectionHandler.class);
                if (h2 != null) {
                    done = true;
                    h2.setCumulator(new AdaptiveCumulator(COMPOSE_MIN_SIZE));
                    ChannelHandlerContext h2ctx = ctx.pipeline().context(h2);
                    h2.encoder().writeSettings(h2ctx, new Http2Settings().maxFrameSize(MAX_FRAME_SIZE), h2ctx.newPromise());
                    h2ctx.flush();
                }
            }
            ctx.fireChannelRead(msg);
            if (done) {
                ctx.pipeline().remove(this);
            }
        }
    }
}
