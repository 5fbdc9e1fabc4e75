package dev.gdsloader.service.server;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.CompositeByteBuf;
import io.netty.channel.ChannelHandler;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelOutboundHandlerAdapter;
import io.netty.channel.ChannelPromise;
import java.nio.ByteBuffer;

/**
 * Keeps the batches' bytes out of a copy on the server's socket writes: a Netty outbound handler next to the socket
 * (first in the pipeline) that hands NIO a buffer it writes as it is.
 *
 * <p>Why: Flight's zero-copy message (HostStream) is a Netty {@code CompositeByteBuf} of one small heap buffer (the
 * protobuf header) and the Arrow buffers over the loader's slot memory. A composite with one heap component is not
 * {@code isDirect()}, and neither is any HTTP/2 DATA frame sliced out of it, so Netty's NIO channel copied every frame
 * into a pooled direct buffer before writing it ({@code AbstractNioChannel.newDirectBuffer}; seen as the server I/O
 * thread's largest cost in a JFR profile of {@code serve-bench}). This handler rewrites such a write as a direct
 * composite over the same memory (the frame's NIO buffers, wrapped; heap parts, a few hundred bytes, copied into a
 * direct buffer), writes that, and releases the original message once the socket write has completed or failed, so
 * the memory is retained exactly as long as before.
 *
 * <p>Thread-safe and stateless ({@link Sharable}); runs on the channel's event loop.
 */
@ChannelHandler.Sharable
final class DirectWrites extends ChannelOutboundHandlerAdapter {
    /** The one instance. */
    static final DirectWrites INSTANCE = new DirectWrites();

    private DirectWrites() {
    }

    @Override
    @SuppressWarnings("FutureReturnValueIgnored") // Netty: the outcome is in the promise passed, or the channel's close
    public void write(ChannelHandlerContext ctx, Object msg, ChannelPromise promise) {
        if (!(msg instanceof ByteBuf buf) || buf.isDirect() || buf.hasMemoryAddress() || buf.readableBytes() == 0
                || buf.nioBufferCount() < 1) {
            ctx.write(msg, promise);
            return;
        }
        ByteBuffer[] parts = buf.nioBuffers();
        boolean anyDirect = false;
        for (ByteBuffer p : parts) {
            anyDirect |= p.isDirect();
        }
        if (!anyDirect) { // a heap message (headers, settings): Netty's own copy is the right thing
            ctx.write(msg, promise);
            return;
        }
        CompositeByteBuf direct = ctx.alloc().compositeDirectBuffer(parts.length);
        try {
            for (ByteBuffer p : parts) {
                if (p.isDirect()) {
                    direct.addComponent(true, io.netty.buffer.Unpooled.wrappedBuffer(p));
                } else {
                    ByteBuf copy = ctx.alloc().directBuffer(p.remaining());
                    copy.writeBytes(p);
                    direct.addComponent(true, copy);
                }
            }
        } catch (RuntimeException | Error e) {
            direct.release();
            throw e;
        }
        ChannelPromise written = ctx.newPromise();
        written.addListener(f -> {
            buf.release(); // the memory the wrapped parts point into, retained until the socket took it
            if (promise.isVoid()) {
                return;
            }
            if (f.isSuccess()) {
                promise.trySuccess();
            } else if (f.isCancelled()) {
                promise.cancel(false);
            } else {
                promise.tryFailure(f.cause());
            }
        });
        ctx.write(direct, written);
    }
}
