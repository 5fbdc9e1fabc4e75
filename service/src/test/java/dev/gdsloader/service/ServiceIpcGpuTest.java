package dev.gdsloader.service;

import dev.gdsloader.cuda.Cuda;
import dev.gdsloader.cuda.CudaDevice;
import dev.gdsloader.loader.path.ReadPath;
import dev.gdsloader.service.client.PrefetchClient;
import dev.gdsloader.service.client.RemoteBatch;
import dev.gdsloader.service.protocol.Delivery;
import java.time.Duration;
import java.util.Arrays;
import java.util.BitSet;
import java.util.List;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;


/**
 * GPU delivery on a real GPU: the server (this JVM) lends its slot buffers as CUDA IPC handles to a client in a
 * child JVM ({@link IpcChild}: CUDA cannot open a handle in the process that made it), which downloads every
 * column from the mapped memory (DoExchange, releases going back); the CRC32 of each column must match the shard
 * files. Also host delivery on a GPU machine (path AUTO reads through host memory). Skips without a GPU.
 */
@Tag("gpu")
@Timeout(300)
class ServiceIpcGpuTest extends ServiceTestBase {

    @BeforeAll
    static void needsGpu() {
        assumeTrue(Cuda.availability().available(), () -> "no GPU: " + Cuda.availability().reason());
        CudaDevice.makeCurrent(0);
    }

    @Test
    void aChildProcessReadsEveryBatchFromTheServersGpuMemoryThroughCudaIpc() throws Exception {
        long opened = server.sessionsOpened();
        ChildJvm.Result child = ChildJvm.runIpcChild(root, 240, "127.0.0.1", Integer.toString(server.port()), "train", "8", "BOUNCE", "2");
        assertEquals(0, child.exitValue(), "child failed or ran over 240 s; stderr:\n" + child.stderr());
        List<String> lines = child.stdout();
        assertEquals("DONE CUDA_IPC BOUNCE", lines.getLast(), "stdout:\n" + String.join("\n", lines));
        BitSet[] seen = {new BitSet(), new BitSet()};
        long[] rec = null;
        int batches = 0;
        for (String line : lines) {
            String[] f = line.split(" ", -1);
            if (f[0].equals("B")) {
                rec = Arrays.stream(f[3].split(",")).mapToLong(Long::parseLong).toArray();
                int e = Integer.parseInt(f[1]);
                for (long r : rec) {
                    assertTrue(!seen[e].get((int) r), "record " + r + " twice in epoch " + e);
                    seen[e].set((int) r);
                }
                batches++;
            } else if (f[0].equals("C")) {
                byte[] expected = ServiceShards.expected(f[1], rec);
                assertEquals(expected.length, Long.parseLong(f[2]), line);
                assertEquals(ServiceShards.crc(expected), Long.parseLong(f[3]), "column " + f[1] + " of records " + Arrays.toString(rec));
            }
        }
        assertEquals(2 * 13, batches);
        assertEquals(RECORDS, seen[0].cardinality());
        assertEquals(RECORDS, seen[1].cardinality());
        awaitSessions(0); // the child's session was freed when it disconnected
        // the client's GetFlightInfo opens the session, its exchange takes it from the parked sessions, and both epochs
        // run on that one exchange: the end message of epoch 0 parked the exchange and {"next": 1} continued it (a
        // session per call would make this 2, a new exchange per epoch 3)
        assertEquals(opened + 1, server.sessionsOpened(), "sessions the child's GetFlightInfo and 2 epochs opened");
    }

    /** HOST delivery on a GPU machine reads through host memory: path AUTO becomes HOST, never disk -> GPU -> host. */
    @Test
    void hostDeliveryOnAGpuMachineReadsThroughTheHostPathByteExact() {
        try (PrefetchClient c = PrefetchClient.builder("127.0.0.1", server.port()).dataset("train").batchSize(8)
                .path(ReadPath.AUTO).delivery(Delivery.HOST).timeout(Duration.ofSeconds(60)).open()) {
            assertEquals("HOST", c.pathTaken());
            long n = 0;
            for (RemoteBatch b : c) {
                try (b) {
                    assertArrayEquals(ServiceShards.expected("x", b.recordIndices()), b.column("x").toByteArray());
                    assertArrayEquals(ServiceShards.expected("y", b.recordIndices()), b.column("y").toByteArray());
                    n += b.records();
                }
            }
            assertEquals(RECORDS, n);
        }
    }

    @Test
    void openingAHandleInTheProcessThatMadeItFailsNamingTheRule() {
        try (PrefetchClient c = PrefetchClient.builder("127.0.0.1", server.port()).dataset("train").batchSize(8)
                .path(ReadPath.BOUNCE).delivery(Delivery.CUDA_IPC).timeout(Duration.ofSeconds(60)).open()) {
            var it = c.iterator();
            var e = org.junit.jupiter.api.Assertions.assertThrows(RuntimeException.class, it::hasNext);
            assertTrue(e.getMessage().contains("cannot open a handle in the process that created it"), e.toString());
        }
    }
}
