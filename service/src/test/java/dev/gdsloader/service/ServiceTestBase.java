package dev.gdsloader.service;

import dev.gdsloader.formats.DType;
import dev.gdsloader.service.client.PrefetchClient;
import dev.gdsloader.service.client.RemoteBatch;
import dev.gdsloader.service.client.RemoteColumn;
import dev.gdsloader.service.protocol.Delivery;
import dev.gdsloader.service.server.PrefetchServer;
import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.io.TempDir;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;


/**
 * A real server on loopback over a dataset {@code train} of {@link #RECORDS} records in three real shards
 * ({@link ServiceShards}); after each test the server is closed and any Netty leak report fails the test.
 */
public abstract class ServiceTestBase {
    protected static final int[] SHARDS = {37, 50, 13};
    protected static final long RECORDS = 100;

    @TempDir
    protected Path root;
    protected PrefetchServer server;

    @BeforeAll
    protected static void leaks() {
        NettyLeaks.install();
    }

    @BeforeEach
    protected void startServer() throws Exception {
        ServiceShards.write(root.resolve("train"), SHARDS);
        server = PrefetchServer.builder(root).start();
    }

    @AfterEach
    protected void stopServer() throws Exception {
        if (server != null) {
            server.close();
        }
        NettyLeaks.check();
    }

    /**
     * Waits for the server's session count to reach {@code n} ({@link Await#HANG}); a session that is not freed fails
     * loudly, saying where the sessions' threads are.
     */
    protected void awaitSessions(int n) {
        Await.until(() -> server.sessions() + " sessions still holding a loader, " + n + " expected; threads:" + threads(),
                () -> server.sessions() == n);
    }

    private static String threads() {
        StringBuilder dump = new StringBuilder();
        Thread.getAllStackTraces().forEach((t, st) -> {
            if (t.getName().startsWith("gdsloader") || t.getName().contains("flight") || t.getName().contains("grpc")) {
                dump.append('\n').append(t.getName()).append(" ").append(t.getState());
                for (int i = 0; i < Math.min(12, st.length); i++) {
                    dump.append("\n    at ").append(st[i]);
                }
            }
        });
        return dump.toString();
    }

    /** Every record of one epoch on one rank, checked byte for byte; @return the record indices seen, in order. */
    protected static List<Long> epoch(PrefetchClient c, long expectedEpoch) {
        List<Long> seen = new ArrayList<>();
        long index = 0;
        for (RemoteBatch b : c) {
            try (b) {
                assertEquals(expectedEpoch, b.epoch());
                assertEquals(index++, b.index());
                checkBytes(b);
                for (long r : b.recordIndices()) {
                    seen.add(r);
                }
            }
        }
        assertEquals(c.batchesPerEpoch(), index);
        return seen;
    }

    protected static void checkBytes(RemoteBatch b) {
        assertEquals(Delivery.HOST, b.delivery());
        long[] rec = b.recordIndices();
        RemoteColumn x = b.column("x");
        assertEquals(DType.UINT8, x.dtype());
        assertArrayEquals(new long[] {rec.length, ServiceShards.X_BYTES}, x.shape());
        assertEquals((long) rec.length * ServiceShards.X_BYTES, x.bytes());
        assertArrayEquals(ServiceShards.expected("x", rec), x.toByteArray(), "x of " + b);
        RemoteColumn y = b.column("y");
        assertEquals(DType.INT32, y.dtype());
        ByteBuffer yb = y.hostBuffer();
        byte[] ys = new byte[yb.remaining()];
        yb.get(ys);
        assertArrayEquals(ServiceShards.expected("y", rec), ys, "y of " + b);
    }
}
