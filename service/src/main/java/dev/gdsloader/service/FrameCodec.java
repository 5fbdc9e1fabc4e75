package dev.gdsloader.service;

import com.fasterxml.jackson.databind.JsonNode;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufInputStream;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelPipeline;
import io.netty.handler.codec.CorruptedFrameException;
import io.netty.handler.codec.LengthFieldBasedFrameDecoder;
import io.netty.handler.codec.MessageToMessageCodec;
import java.io.IOException;
import java.util.List;

/**
 * Turns a length-stripped frame ({@code [int32 headerLength][JSON header][payload]}) into a {@link Frame} and
 * back. The decoded frame's payload is a retained slice of the incoming buffer (no copy); the encoder emits
 * the header buffer and then the payload itself, handing the payload's reference to the outbound pipeline.
 * One instance per channel (it is not {@code @Sharable}).
 */
final class FrameCodec extends MessageToMessageCodec<ByteBuf, Frame> {

    /** Adds the length-field framing and this codec to {@code p}. */
    static void install(ChannelPipeline p) {
        p.addLast("frames", new LengthFieldBasedFrameDecoder(Protocol.MAX_FRAME_BYTES, 0, 4, 0, 4));
        p.addLast("codec", new FrameCodec());
    }

    @Override
    protected void encode(ChannelHandlerContext ctx, Frame f, List<Object> out) throws IOException {
        byte[] header = Protocol.JSON.writeValueAsBytes(f.header());
        ByteBuf payload = f.content();
        ByteBuf head = ctx.alloc().buffer(8 + header.length);
        head.writeInt(4 + header.length + payload.readableBytes());
        head.writeInt(header.length);
        head.writeBytes(header);
        out.add(head);
        if (payload.isReadable()) {
            out.add(payload.retain()); // the codec releases f (and so one reference of payload) after encode
        }
    }

    @Override
    protected void decode(ChannelHandlerContext ctx, ByteBuf in, List<Object> out) throws IOException {
        if (in.readableBytes() < 4) {
            throw new CorruptedFrameException("frame of " + in.readableBytes() + " bytes has no header length");
        }
        int headerLength = in.readInt();
        if (headerLength < 2 || headerLength > Math.min(Protocol.MAX_HEADER_BYTES, in.readableBytes())) {
            throw new CorruptedFrameException("header length " + headerLength + " outside 2.."
                    + Math.min(Protocol.MAX_HEADER_BYTES, in.readableBytes()) + " bytes");
        }
        JsonNode h;
        try (ByteBufInputStream s = new ByteBufInputStream(in.readSlice(headerLength))) {
            h = Protocol.JSON.readTree((java.io.InputStream) s);
        }
        // isIntegralNumber: a version of 1.5 is not version 1 (canConvertToInt alone truncates it)
        if (h == null || !h.isObject() || !h.path("version").isIntegralNumber() || !h.path("version").canConvertToInt()
                || !h.path("type").isTextual()) {
            throw new CorruptedFrameException("header must be a JSON object with an int 'version' and a text 'type', got " + h);
        }
        out.add(new Frame(h.get("version").intValue(), h.get("type").textValue(), h.path("body"), in.readRetainedSlice(in.readableBytes())));
    }
}
