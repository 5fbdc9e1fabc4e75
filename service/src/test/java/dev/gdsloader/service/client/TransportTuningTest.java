package dev.gdsloader.service.client;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.gdsloader.formats.DType;
import dev.gdsloader.formats.npy.NpyWriter;
import dev.gdsloader.loader.path.ReadPath;
import dev.gdsloader.service.ServiceTestBase;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.embedded.EmbeddedChannel;
import io.netty.handler.codec.http2.DefaultHttp2Headers;
import io.netty.handler.codec.http2.Http2ConnectionHandler;
import io.netty.handler.codec.http2.Http2ConnectionHandlerBuilder;
import io.netty.handler.codec.http2.Http2FrameAdapter;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.lang.foreign.MemorySegment;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;



/**
 * What the client's and the server's transports are tuned to ({@link ClientTransport}; the server's write-buffer marks: {@code WriteBufferMarksTest}),
 * checked on real connections: the frames on the wire between a real client and a real server (through a TCP proxy
 * that reads the HTTP/2 frame headers it forwards), the bytes received, the receive path's memory (a real Netty HTTP/2
 * handler) and the server's accepted channels.
 */
@Timeout(120)
class TransportTuningTest extends ServiceTestBase {
    private static final int RECORD_BYTES = 96 << 10;
    private static final int BIG_RECORDS = 40;

    /** Record r's byte j of dataset {@code big}: every byte differs from its neighbours and from other records'. */
    private static byte value(int r, int j) {
        return (byte) (r * 131 + j * 7 + (j >>> 8));
    }

    private void big() throws IOException {
        byte[] x = new byte[BIG_RECORDS * RECORD_BYTES];
        for (int r = 0; r < BIG_RECORDS; r++) {
            for (int j = 0; j < RECORD_BYTES; j++) {
                x[r * RECORD_BYTES + j] = value(r, j);
            }
        }
        Files.createDirectories(root.resolve("big"));
        NpyWriter.write(root.resolve("big").resolve("x-00000.npy"), DType.UINT8, new long[] {BIG_RECORDS, RECORD_BYTES}, x);
    }

    /** @return a client of dataset {@code big} in batches of 8 through {@code port} */
    private static PrefetchClient bigClient(int port) {
        return PrefetchClient.builder("127.0.0.1", port).dataset("big").batchSize(8).path(ReadPath.HOST)
                .timeout(Duration.ofSeconds(30)).open();
    }

    /**
     * The client asks for 1 MiB frames and the server sends DATA frames larger than HTTP/2's 16 KiB default (at most
     * 1 MiB); every byte of the epoch arrives as written. Without the client's SETTINGS the largest DATA frame is
     * 16384 bytes.
     */
    @Test
    void theClientAsksForLargeFramesTheServerSendsThemAndEveryByteArrives() throws Exception {
        big();
        try (FrameProxy proxy = new FrameProxy(server.port()); PrefetchClient c = bigClient(proxy.port())) {
            int records = 0;
            for (RemoteBatch b : c) {
                try (b) {
                    long[] rec = b.recordIndices();
                    byte[] got = b.column("x").toByteArray();
                    assertEquals((long) rec.length * RECORD_BYTES, got.length);
                    for (int i = 0; i < rec.length; i++) {
                        byte[] want = new byte[RECORD_BYTES];
                        for (int j = 0; j < RECORD_BYTES; j++) {
                            want[j] = value((int) rec[i], j);
                        }
                        assertArrayEquals(want, java.util.Arrays.copyOfRange(got, i * RECORD_BYTES, (i + 1) * RECORD_BYTES),
                                "record " + rec[i]);
                        records++;
                    }
                }
            }
            assertEquals(BIG_RECORDS, records);
            int largest = proxy.largestData.get();
            assertTrue(largest > 16384 && largest <= ClientTransport.MAX_FRAME_SIZE,
                    "largest DATA frame from the server: " + largest + " bytes");
            assertTrue(proxy.maxFrameSizesAsked.contains(ClientTransport.MAX_FRAME_SIZE),
                    "SETTINGS_MAX_FRAME_SIZE values the client sent: " + proxy.maxFrameSizesAsked);
        }
        awaitSessions(0);
    }

    /**
     * A HOST stream carries no validity bitmaps ({@code HostStream.Handoff} on the server): the DATA bytes of an epoch on the wire are
     * the column bytes plus {@code _record}, {@code _padding}, the IPC headers and the app_metadata (under 2 % here);
     * with Arrow Java's bitmaps a UINT8 column carries 1/8 more. The records still arrive byte-exact (the first test).
     */
    @Test
    void aHostStreamCarriesNoValidityBitmaps() throws Exception {
        big();
        long columnBytes = (long) BIG_RECORDS * RECORD_BYTES;
        try (FrameProxy proxy = new FrameProxy(server.port()); PrefetchClient c = bigClient(proxy.port())) {
            long received = 0;
            for (RemoteBatch b : c) {
                try (b) {
                    received += b.column("x").bytes();
                }
            }
            assertEquals(columnBytes, received);
            long wire = proxy.dataBytes.get();
            assertTrue(wire >= columnBytes && wire < columnBytes * 1.02,
                    "DATA bytes of the epoch on the wire: " + wire + " for " + columnBytes + " column bytes");
        }
        awaitSessions(0);
    }

    /**
     * The client's HTTP/2 handler keeps received bytes where the socket read put them: a DATA frame split across two
     * reads is handed to the frame listener over the second read's own memory (Netty's default cumulator copied it
     * into a new buffer). The tuning handler also sends SETTINGS with the 1 MiB frame size and leaves the pipeline.
     */
    @Test
    @SuppressWarnings("FutureReturnValueIgnored") // Netty: the frames are read back from the channel below
    void aFrameSplitAcrossReadsIsNotCopiedAndTheClientAsksForLargeFrames() {
        List<long[]> dataParts = new ArrayList<>(); // per DATA frame: the address and length of each of its parts
        Http2ConnectionHandler h2 = new Http2ConnectionHandlerBuilder().server(false).frameListener(new Http2FrameAdapter() {
            @Override
            public int onDataRead(ChannelHandlerContext ctx, int streamId, ByteBuf data, int padding, boolean end) {
                for (ByteBuffer p : data.nioBuffers()) {
                    dataParts.add(new long[] {MemorySegment.ofBuffer(p).address(), p.remaining()});
                }
                return data.readableBytes() + padding;
            }
        }).build();
        EmbeddedChannel ch = new EmbeddedChannel(new ClientTransport.Tuning(), h2);
        ChannelHandlerContext h2ctx = ch.pipeline().context(h2);
        h2.encoder().writeHeaders(h2ctx, 1, new DefaultHttp2Headers(), 0, false, h2ctx.newPromise()); // opens stream 1
        ch.flushOutbound();
        drainOutbound(ch); // the preface, the initial SETTINGS and the HEADERS

        int payload = 8 << 10;
        int first = 2 << 10;
        ByteBuf read1 = Unpooled.directBuffer();
        writeFrameHeader(read1, 0, 0x4, 0, 0); // the server's SETTINGS, empty
        writeFrameHeader(read1, payload, 0x0, 0, 1); // DATA on stream 1, 8 KiB
        for (int i = 0; i < first; i++) {
            read1.writeByte(i * 3);
        }
        ByteBuf read2 = Unpooled.directBuffer(payload - first);
        for (int i = first; i < payload; i++) {
            read2.writeByte(i * 3);
        }
        long read2Address = read2.memoryAddress();
        ch.writeInbound(read1);
        assertNull(ch.pipeline().get(ClientTransport.Tuning.class), "the tuning handler left the pipeline");
        List<Integer> asked = settingsMaxFrameSizes(ch);
        assertEquals(List.of(ClientTransport.MAX_FRAME_SIZE), asked, "SETTINGS_MAX_FRAME_SIZE sent after the swap");
        ch.writeInbound(read2);

        assertFalse(dataParts.isEmpty(), "the DATA frame was read");
        long[] last = dataParts.get(dataParts.size() - 1);
        assertEquals(read2Address, last[0], "the frame's tail is the second read's memory, not a copy");
        assertEquals(payload - first, last[1]);
        ch.finishAndReleaseAll();
    }

    private static void writeFrameHeader(ByteBuf b, int length, int type, int flags, int stream) {
        b.writeMedium(length).writeByte(type).writeByte(flags).writeInt(stream);
    }

    private static void drainOutbound(EmbeddedChannel ch) {
        for (Object o; (o = ch.readOutbound()) != null; ) {
            io.netty.util.ReferenceCountUtil.release(o);
        }
    }

    /** @return the SETTINGS_MAX_FRAME_SIZE values of the SETTINGS frames the channel wrote since the last drain */
    private static List<Integer> settingsMaxFrameSizes(EmbeddedChannel ch) {
        ByteBuf all = Unpooled.buffer();
        for (Object o; (o = ch.readOutbound()) != null; ) {
            ByteBuf b = (ByteBuf) o;
            all.writeBytes(b);
            b.release();
        }
        List<Integer> sizes = new ArrayList<>();
        while (all.readableBytes() >= 9) {
            int length = all.readUnsignedMedium();
            int type = all.readUnsignedByte();
            int flags = all.readUnsignedByte();
            all.readInt();
            ByteBuf body = all.readSlice(length);
            if (type == 0x4 && (flags & 1) == 0) {
                while (body.readableBytes() >= 6) {
                    int id = body.readUnsignedShort();
                    long value = body.readUnsignedInt();
                    if (id == 0x5) {
                        sizes.add((int) value);
                    }
                }
            }
        }
        all.release();
        return sizes;
    }

    /**
     * A loopback TCP proxy to the server that forwards every byte unchanged and reads the HTTP/2 frame headers as they
     * pass: the largest DATA frame from the server, the DATA bytes it sent and the SETTINGS_MAX_FRAME_SIZE values from
     * the client.
     */
    private static final class FrameProxy implements AutoCloseable {
        private final ServerSocket listener = new ServerSocket(0, 8, InetAddress.getLoopbackAddress());
        private final int target;
        private final List<Socket> sockets = new CopyOnWriteArrayList<>();
        final AtomicInteger largestData = new AtomicInteger();
        final java.util.concurrent.atomic.AtomicLong dataBytes = new java.util.concurrent.atomic.AtomicLong();
        final List<Integer> maxFrameSizesAsked = new CopyOnWriteArrayList<>();

        FrameProxy(int target) throws IOException {
            this.target = target;
            Thread.ofPlatform().daemon().name("frame-proxy-accept").start(this::accept);
        }

        int port() {
            return listener.getLocalPort();
        }

        private void accept() {
            try {
                while (true) {
                    Socket client = listener.accept();
                    Socket upstream = new Socket(InetAddress.getLoopbackAddress(), target);
                    sockets.add(client);
                    sockets.add(upstream);
                    Thread.ofPlatform().daemon().name("frame-proxy-up").start(() -> pump(client, upstream, true));
                    Thread.ofPlatform().daemon().name("frame-proxy-down").start(() -> pump(upstream, client, false));
                }
            } catch (IOException closed) {
                // the proxy was closed
            }
        }

        /** Forwards {@code from} to {@code to}, reading frame headers (after the 24-byte preface when from the client). */
        private void pump(Socket from, Socket to, boolean fromClient) {
            try (InputStream in = from.getInputStream(); OutputStream out = to.getOutputStream()) {
                if (fromClient) {
                    out.write(in.readNBytes(24)); // PRI * HTTP/2.0 ...
                }
                byte[] header = new byte[9];
                while (true) {
                    int n = in.readNBytes(header, 0, 9);
                    if (n < 9) {
                        out.write(header, 0, n);
                        return;
                    }
                    out.write(header);
                    int length = ((header[0] & 0xff) << 16) | ((header[1] & 0xff) << 8) | (header[2] & 0xff);
                    int type = header[3] & 0xff;
                    byte[] body = in.readNBytes(length);
                    out.write(body);
                    if (!fromClient && type == 0x0) {
                        largestData.accumulateAndGet(length, Math::max);
                        dataBytes.addAndGet(length);
                    }
                    if (fromClient && type == 0x4 && (header[4] & 1) == 0) {
                        ByteBuffer s = ByteBuffer.wrap(body);
                        while (s.remaining() >= 6) {
                            int id = s.getShort() & 0xffff;
                            int value = s.getInt();
                            if (id == 0x5) {
                                maxFrameSizesAsked.add(value);
                            }
                        }
                    }
                    if (body.length < length) {
                        return;
                    }
                }
            } catch (IOException closed) {
                // either side went away
            } finally {
                closeQuietly(from);
                closeQuietly(to);
            }
        }

        private static void closeQuietly(Socket s) {
            try {
                s.close();
            } catch (IOException ignored) {
                // closing
            }
        }

        @Override
        public void close() throws IOException {
            listener.close();
            for (Socket s : sockets) {
                closeQuietly(s);
            }
        }
    }
}
