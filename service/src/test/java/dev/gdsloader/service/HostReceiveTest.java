package dev.gdsloader.service;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.gdsloader.formats.DType;
import dev.gdsloader.formats.npy.NpyWriter;
import dev.gdsloader.loader.path.ReadPath;
import dev.gdsloader.loader.LoaderOptions;
import java.lang.management.ManagementFactory;
import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Iterator;
import org.apache.arrow.flight.FlightClient;
import org.apache.arrow.flight.FlightStream;
import org.apache.arrow.flight.Location;
import org.apache.arrow.flight.Ticket;
import org.apache.arrow.memory.RootAllocator;
import org.apache.arrow.vector.complex.FixedSizeListVector;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * HOST delivery's receive path ({@link DoGetReader}) against a real server on loopback over real {@code .npy} shards
 * of large records (64 records x 256 KiB, 2 MiB per batch of 8): byte-exact, one copy (no heap copy of the bodies,
 * which Flight Java's own receive path makes),
 * and nothing left held when a stream is abandoned.
 */
@Timeout(120)
class HostReceiveTest {
    private static final int RECORD_BYTES = 256 << 10;
    private static final int RECORDS = 64;
    private static final int BATCH = 8;

    @TempDir
    static Path root;
    private static PrefetchServer server;

    @BeforeAll
    static void start() throws Exception {
        NettyLeaks.install();
        byte[] x = new byte[RECORDS * RECORD_BYTES];
        for (int r = 0; r < RECORDS; r++) {
            for (int j = 0; j < RECORD_BYTES; j += 4096) {
                x[r * RECORD_BYTES + j] = value(r, j);
            }
            x[r * RECORD_BYTES + RECORD_BYTES - 1] = value(r, RECORD_BYTES - 1);
        }
        java.nio.file.Files.createDirectories(root.resolve("big"));
        NpyWriter.write(root.resolve("big").resolve("x-00000.npy"), DType.UINT8, new long[] {RECORDS, RECORD_BYTES}, x);
        server = PrefetchServer.builder(root).start();
    }

    @AfterAll
    static void stop() throws Exception {
        server.close();
        NettyLeaks.check();
    }

    /** Record {@code r}'s byte {@code j} where the test sets one (every 4096th and the last); 0 elsewhere. */
    private static byte value(long r, int j) {
        return (byte) (r * 31 + j / 4096 + 1);
    }

    private static PrefetchClient.Builder client() {
        return PrefetchClient.builder("127.0.0.1", server.port()).dataset("big").batchSize(BATCH).path(ReadPath.HOST)
                .timeout(Duration.ofSeconds(30));
    }

    /** Reads an epoch, checking each batch's bytes; @return the column bytes received */
    private static long epoch(PrefetchClient c) {
        long bytes = 0;
        for (RemoteBatch b : c) {
            try (b) {
                ByteBuffer x = b.column("x").hostBuffer();
                assertEquals((long) b.records() * RECORD_BYTES, x.remaining());
                for (int i = 0; i < b.records(); i++) {
                    long r = b.recordIndex(i);
                    for (int j = 0; j < RECORD_BYTES; j++) {
                        boolean set = j % 4096 == 0 || j == RECORD_BYTES - 1;
                        byte want = set ? value(r, j) : 0;
                        if (x.get(i * RECORD_BYTES + j) != want) {
                            throw new AssertionError("record " + r + " byte " + j + " of " + b + ": got "
                                    + x.get(i * RECORD_BYTES + j) + ", expected " + want);
                        }
                    }
                }
                bytes += x.remaining();
            }
        }
        return bytes;
    }

    /** @return heap bytes allocated so far by gRPC's client executor threads (where received messages are parsed) */
    private static long clientExecutorHeap() {
        com.sun.management.ThreadMXBean mx = (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();
        long sum = 0;
        for (Thread t : Thread.getAllStackTraces().keySet()) {
            if (t.getName().startsWith("grpc-default-executor")) {
                sum += Math.max(0, mx.getThreadAllocatedBytes(t.threadId()));
            }
        }
        return sum;
    }

    @Test
    @SuppressWarnings("try") // FlightClient's and FlightStream's close() may throw InterruptedException
    void anEpochIsByteExactAndItsBodiesAreNotCopiedThroughTheHeap() throws Exception {
        long bytes = (long) RECORDS * RECORD_BYTES;
        long flightHeap;
        // the same epoch through Flight Java's own receive path (FlightClient.getStream), for comparison
        Request r = new Request("big", LoaderOptions.defaults().withBatchSize(BATCH).withPath(ReadPath.HOST), Delivery.HOST, 0, null);
        try (RootAllocator a = new RootAllocator();
             FlightClient f = FlightClient.builder(a, Location.forGrpcInsecure("127.0.0.1", server.port())).build()) {
            for (int round = 0; round < 2; round++) { // the first warms up
                long h0 = clientExecutorHeap();
                long got = 0;
                try (FlightStream s = f.getStream(new Ticket(r.toBytes()))) {
                    while (s.next()) {
                        got += ((FixedSizeListVector) s.getRoot().getVector("x")).getDataVector().getDataBuffer().capacity();
                    }
                }
                assertTrue(got >= bytes, got + " bytes");
                flightHeap = clientExecutorHeap() - h0;
                if (round == 1) {
                    assertTrue(flightHeap >= bytes, "Flight's receive path allocated only " + flightHeap
                            + " heap bytes for " + bytes + " bytes of bodies: the comparison below means nothing");
                    try (PrefetchClient c = client().open()) {
                        epoch(c); // warm-up
                        long h1 = clientExecutorHeap();
                        assertEquals(bytes, epoch(c));
                        long heap = clientExecutorHeap() - h1;
                        // Netty's paranoid leak detection (the tests' setting) adds a record per buffer access to both
                        assertTrue(heap + bytes / 2 < flightHeap, "heap allocated by gRPC's executor while receiving "
                                + bytes + " bytes: " + heap + " bytes (Flight's own path: " + flightHeap + ")");
                    }
                }
            }
        }
    }

    @Test
    void aStreamAbandonedMidEpochHoldsNothing() throws Exception {
        try (PrefetchClient c = client().open()) {
            Iterator<RemoteBatch> it = c.iterator();
            RemoteBatch kept = it.next();
            it.next().close();
            assertEquals(BATCH * RECORD_BYTES, kept.column("x").bytes());
        } // closes the batch still held, cancels the stream and closes the client's allocator (which throws on a leak)
        long deadline = System.nanoTime() + 15_000_000_000L;
        while (server.sessions() > 0 && System.nanoTime() < deadline) {
            Thread.sleep(10);
        }
        assertEquals(0, server.sessions(), "the server still holds the abandoned stream's session");
    }

    @Test
    void aWindowOutOfRangeIsRefused() {
        assertThrows(IllegalArgumentException.class, () -> client().flowControlWindow(1024));
        assertThrows(IllegalArgumentException.class, () -> client().flowControlWindow(Integer.MAX_VALUE));
        try (PrefetchClient c = client().flowControlWindow(64 << 10).open()) { // the smallest: still byte-exact
            assertEquals((long) RECORDS * RECORD_BYTES, epoch(c));
        }
    }
}
