package dev.gdsloader.service.server;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import io.netty.buffer.CompositeByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.embedded.EmbeddedChannel;
import java.lang.foreign.MemorySegment;
import java.nio.ByteBuffer;
import org.junit.jupiter.api.Test;



/** {@link DirectWrites} on a real Netty pipeline (an {@link EmbeddedChannel}, whose head takes what reaches it). */
class DirectWritesTest {

    /** Flight's zero-copy message shape: a small heap header and a direct body. */
    @Test
    void aMixedMessageIsWrittenDirectOverTheSameMemoryAndReleasedAfterTheWrite() {
        byte[] body = new byte[64 << 10];
        for (int i = 0; i < body.length; i++) {
            body[i] = (byte) (i * 7 + 3);
        }
        ByteBuf header = Unpooled.buffer(5).writeBytes(new byte[] {1, 2, 3, 4, 5});
        ByteBuf data = Unpooled.directBuffer(body.length).writeBytes(body);
        CompositeByteBuf msg = Unpooled.compositeBuffer().addComponents(true, header, data);
        ByteBuf frame = msg.retainedSlice(2, msg.readableBytes() - 2); // an HTTP/2 DATA frame's slice of it
        msg.release();
        assertFalse(frame.isDirect(), "the case this handler is for: Netty's NIO channel would copy this");
        long bodyAddress = MemorySegment.ofBuffer(data.nioBuffer()).address();

        EmbeddedChannel ch = new EmbeddedChannel(DirectWrites.INSTANCE);
        frame.retain(); // this test's own reference: the channel's write completes as soon as it is queued
        assertTrue(ch.writeOutbound(frame));
        assertEquals(1, frame.refCnt(), "the write's reference is released once the write completed");
        ByteBuf out = ch.readOutbound();
        try {
            assertTrue(out.isDirect());
            byte[] expected = new byte[3 + body.length];
            expected[0] = 3;
            expected[1] = 4;
            expected[2] = 5;
            System.arraycopy(body, 0, expected, 3, body.length);
            assertArrayEquals(expected, ByteBufUtil.getBytes(out));
            ByteBuffer[] parts = out.nioBuffers();
            assertEquals(2, parts.length);
            assertEquals(bodyAddress, MemorySegment.ofBuffer(parts[1]).address(), "the body was copied");
        } finally {
            out.release();
            frame.release();
        }
        assertEquals(0, data.refCnt());
        assertFalse(ch.finish());
    }

    @Test
    void heapAndDirectMessagesPassAsTheyAre() {
        EmbeddedChannel ch = new EmbeddedChannel(DirectWrites.INSTANCE);
        ByteBuf heap = Unpooled.wrappedBuffer(new byte[] {9, 8, 7});
        ByteBuf direct = Unpooled.directBuffer(8).writeLong(42);
        assertTrue(ch.writeOutbound(heap, direct));
        ByteBuf a = ch.readOutbound();
        ByteBuf b = ch.readOutbound();
        assertSame(heap, a);
        assertSame(direct, b);
        a.release();
        b.release();
        assertFalse(ch.finish());
    }
}
