package dev.gdsloader.service;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.gdsloader.formats.DType;
import dev.gdsloader.loader.Batch;
import dev.gdsloader.loader.GdsLoader;
import dev.gdsloader.loader.LoaderOptions;
import dev.gdsloader.loader.ReadPath;
import dev.gdsloader.loader.sampler.Partition;
import dev.gdsloader.loader.sampler.SamplerOptions;
import dev.gdsloader.loader.sampler.Shuffle;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.net.Socket;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.BitSet;
import java.util.Iterator;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** The prefetch service with host delivery: a real server on loopback, real clients, real shard files. */
@Timeout(120)
class PrefetchServiceTest extends ServiceTestBase {

    private PrefetchClient.Builder client() {
        return PrefetchClient.builder("127.0.0.1", server.port()).dataset("train").batchSize(8).path(ReadPath.HOST)
                .timeout(Duration.ofSeconds(30));
    }

    /** Every record of one epoch on one rank, checked byte for byte; @return the record indices seen, in order. */
    private static List<Long> epoch(PrefetchClient c, long expectedEpoch) {
        List<Long> seen = new ArrayList<>();
        long index = 0;
        for (RemoteBatch b : c) {
            try (b) {
                assertEquals(expectedEpoch, b.epoch());
                assertEquals(index++, b.index());
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
                for (long r : rec) {
                    seen.add(r);
                }
            }
        }
        assertEquals(c.batchesPerEpoch(), index);
        return seen;
    }

    @Test
    void twoRanksGetDisjointRecordsCoveringTheDatasetExactlyOnceWithByteExactPayloads() throws Exception {
        ExecutorService pool = Executors.newFixedThreadPool(2);
        try {
            List<Future<List<List<Long>>>> ranks = new ArrayList<>();
            for (int rank = 0; rank < 2; rank++) {
                int r = rank;
                ranks.add(pool.submit(() -> {
                    try (PrefetchClient c = client().shuffle(Shuffle.GLOBAL, 7).ranks(r, 2, Partition.EXACT_ONCE).prefetchDepth(3).open()) {
                        assertEquals("HOST", c.pathTaken());
                        assertEquals(Delivery.HOST, c.delivery());
                        return List.of(epoch(c, 0), epoch(c, 1));
                    }
                }));
            }
            List<List<Long>> r0 = ranks.get(0).get(60, TimeUnit.SECONDS);
            List<List<Long>> r1 = ranks.get(1).get(60, TimeUnit.SECONDS);
            for (int e = 0; e < 2; e++) {
                BitSet seen = new BitSet();
                for (List<Long> rank : List.of(r0.get(e), r1.get(e))) {
                    for (long i : rank) {
                        assertFalse(seen.get((int) i), "record " + i + " delivered twice in epoch " + e);
                        seen.set((int) i);
                    }
                }
                assertEquals(RECORDS, seen.cardinality(), "epoch " + e + " covers every record");
                assertEquals(RECORDS, r0.get(e).size() + r1.get(e).size());
            }
            assertFalse(r0.get(0).equals(r0.get(1)), "a shuffled epoch 1 differs from epoch 0");
        } finally {
            pool.shutdownNow();
        }
        awaitSessions(0);
    }

    /** The options a client sends are the ones its session's loader runs: same order as a local loader built from them. */
    @Test
    void theSessionLoaderRunsTheClientsOptions() throws Exception {
        LoaderOptions o = LoaderOptions.defaults().withBatchSize(6).withPath(ReadPath.HOST).withPrefetchDepth(2)
                .withColumns(List.of("y")).withSampler(SamplerOptions.sequential().withShuffle(Shuffle.SHARD_BLOCKS, 3)
                        .withBlockRecords(4).withRanks(1, 3, Partition.PAD).withDropLast(true));
        List<long[]> local = new ArrayList<>();
        try (GdsLoader loader = GdsLoader.builder(root.resolve("train")).options(o).build()) {
            for (Batch b : loader) {
                try (b) {
                    local.add(b.recordIndices());
                }
            }
        }
        List<long[]> remote = new ArrayList<>();
        try (PrefetchClient c = PrefetchClient.builder("127.0.0.1", server.port()).dataset("train").options(o)
                .timeout(Duration.ofSeconds(30)).open()) {
            assertEquals(2, c.slots());
            for (RemoteBatch b : c) {
                try (b) {
                    assertEquals(List.of("y"), b.columns().stream().map(RemoteColumn::name).toList());
                    remote.add(b.recordIndices());
                }
            }
        }
        assertEquals(local.size(), remote.size());
        assertEquals(5, remote.size(), "34 records of rank 1 of 3 (padded), drop_last: 5 batches of 6");
        for (int i = 0; i < local.size(); i++) {
            assertArrayEquals(local.get(i), remote.get(i), "batch " + i);
        }
        awaitSessions(0);
    }

    @Test
    void aBadDatasetOrOptionGetsAnErrorNamingItAndTheServerKeepsServing() throws Exception {
        var unknown = assertThrows(PrefetchServiceException.class, () -> client().dataset("nope").open());
        assertTrue(unknown.getMessage().contains("unknown dataset 'nope'"), unknown.getMessage());
        var outside = assertThrows(PrefetchServiceException.class, () -> client().dataset("../..").open());
        assertTrue(outside.getMessage().contains("dataset '../..' refused"), outside.getMessage());
        var batch = assertThrows(PrefetchServiceException.class, () -> client().batchSize(0).open());
        assertTrue(batch.getMessage().contains("batchSize"), batch.getMessage());
        var depth = assertThrows(IllegalArgumentException.class, () -> client().prefetchDepth(65));
        assertTrue(depth.getMessage().contains("prefetchDepth"), depth.getMessage());
        var column = assertThrows(PrefetchServiceException.class, () -> client().columns("z").open());
        assertTrue(column.getMessage().contains("'z'"), column.getMessage());
        var ipc = assertThrows(PrefetchServiceException.class, () -> client().delivery(Delivery.CUDA_IPC).open());
        assertTrue(ipc.getMessage().contains("CUDA_IPC needs batches in GPU memory"), ipc.getMessage());

        try (PrefetchClient c = client().columns("y").open()) {
            long n = 0;
            for (RemoteBatch b : c) {
                try (b) {
                    assertEquals(List.of("y"), b.columns().stream().map(RemoteColumn::name).toList());
                    n += b.records();
                }
            }
            assertEquals(RECORDS, n);
        }
        awaitSessions(0);
    }

    @Test
    void aFrameOfAnotherVersionAnUnknownOptionOrBrokenFramingIsRefusedByName() throws Exception {
        try (Socket s = new Socket("127.0.0.1", server.port())) {
            s.setSoTimeout(10_000);
            var out = new DataOutputStream(s.getOutputStream());
            var in = new DataInputStream(s.getInputStream());
            write(out, "{\"version\":2,\"type\":\"OPEN\",\"body\":{\"dataset\":\"train\",\"options\":{\"batchSize\":4},\"bogus\":1}}");
            String err = read(in);
            assertTrue(err.contains("\"ERROR\"") && err.contains("bogus"), err);
            write(out, "{\"version\":2,\"type\":\"OPEN\",\"body\":{\"dataset\":\"train\",\"options\":{\"batchSize\":4,\"bogus\":1}}}");
            err = read(in);
            assertTrue(err.contains("\"ERROR\"") && err.contains("unknown option 'bogus'"), err);
            write(out, "{\"version\":2,\"type\":\"OPEN\",\"body\":{\"dataset\":\"train\",\"options\":{\"batchSize\":4,\"prefetchDepth\":65}}}");
            err = read(in);
            assertTrue(err.contains("\"ERROR\"") && err.contains("prefetchDepth must be 1..64"), err);
            write(out, "{\"version\":2,\"type\":\"OPEN\",\"body\":{\"dataset\":\"train\",\"options\":{\"sampler\":{\"shuffle\":\"global\"}}}}");
            err = read(in);
            assertTrue(err.contains("\"ERROR\"") && err.contains("batchSize must be > 0"), err);
            write(out, "{\"version\":2,\"type\":\"NEXT\",\"body\":{}}");
            err = read(in);
            assertTrue(err.contains("NEXT before OPEN"), err);
            write(out, "{\"version\":1,\"type\":\"OPEN\",\"body\":{\"dataset\":\"train\",\"batchSize\":4}}");
            err = read(in);
            assertTrue(err.contains("protocol version 1 is not supported") && err.contains("version 2"), err);
        }
        try (Socket s = new Socket("127.0.0.1", server.port())) {
            s.setSoTimeout(10_000);
            var out = new DataOutputStream(s.getOutputStream());
            out.writeInt(8);
            out.writeInt(1_000_000); // a header longer than the frame
            out.writeInt(0);
            out.flush();
            String err = read(new DataInputStream(s.getInputStream()));
            assertTrue(err.contains("header length 1000000") && err.contains("\"fatal\":true"), err);
            assertEquals(-1, s.getInputStream().read(), "the server closes a connection whose framing is broken");
        }
        awaitSessions(0);
        try (PrefetchClient c = client().open()) {
            assertTrue(c.iterator().hasNext());
        }
    }

    /** OPEN without a body, or with one that is not an object, gets an ERROR naming what is missing (not an NPE). */
    @Test
    void anOpenWithoutABodyIsRefusedNamingTheBodyExpected() throws Exception {
        try (Socket s = new Socket("127.0.0.1", server.port())) {
            s.setSoTimeout(10_000);
            var out = new DataOutputStream(s.getOutputStream());
            var in = new DataInputStream(s.getInputStream());
            for (String open : List.of("{\"version\":2,\"type\":\"OPEN\"}", "{\"version\":2,\"type\":\"OPEN\",\"body\":null}",
                    "{\"version\":2,\"type\":\"OPEN\",\"body\":[]}")) {
                write(out, open);
                String err = read(in);
                assertTrue(err.contains("\"ERROR\"") && err.contains("OPEN has") && err.contains("expected \\\"body\\\": {\\\"dataset\\\"")
                        && !err.contains("NullPointerException") && err.contains("\"fatal\":false"), open + " -> " + err);
            }
            write(out, "{\"version\":2,\"type\":\"RELEASE\"}");
            String err = read(in);
            assertTrue(err.contains("RELEASE has no body") && !err.contains("NullPointerException"), err);
            write(out, "{\"version\":2,\"type\":\"OPEN\",\"body\":{\"dataset\":\"train\",\"options\":{\"batchSize\":4}}}");
            assertTrue(read(in).contains("\"OPENED\""), "the connection stays usable");
        }
        awaitSessions(0);
    }

    /** A version of 1.5 is not version 1 (nor 2): the header is refused, fatally, naming the field. */
    @Test
    void aFractionalProtocolVersionIsRefused() throws Exception {
        for (String version : List.of("1.5", "2.0", "2.5", "\"2\"")) {
            try (Socket s = new Socket("127.0.0.1", server.port())) {
                s.setSoTimeout(10_000);
                var out = new DataOutputStream(s.getOutputStream());
                write(out, "{\"version\":" + version + ",\"type\":\"OPEN\",\"body\":{\"dataset\":\"train\",\"options\":{\"batchSize\":4}}}");
                String err = read(new DataInputStream(s.getInputStream()));
                assertTrue(err.contains("\"ERROR\"") && err.contains("int 'version'") && err.contains("\"fatal\":true"), version + " -> " + err);
                assertEquals(-1, s.getInputStream().read(), "the server closes the connection");
            }
        }
        awaitSessions(0);
    }

    /**
     * A client whose server goes away mid-epoch throws; a process that lets the exception end {@code main} without
     * closing the client must still exit (the client's I/O thread is a daemon).
     */
    @Test
    void aClientProcessThatFailsWithoutClosingItsClientExits() throws Exception {
        Process p = ChildJvm.command(ClientChild.class, List.of(), Integer.toString(server.port()))
                .redirectError(root.resolve("client.err").toFile()).start();
        try (var out = new java.io.BufferedReader(new java.io.InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8))) {
            String first = out.readLine();
            assertEquals("reading", first, Files.readString(root.resolve("client.err")));
            server.close();
            assertTrue(p.waitFor(30, TimeUnit.SECONDS), "the client JVM did not exit after its error");
            assertEquals(1, p.exitValue());
            assertTrue(Files.readString(root.resolve("client.err")).contains("PrefetchServiceException"),
                    Files.readString(root.resolve("client.err")));
        } finally {
            p.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
        }
    }

    private static void write(DataOutputStream out, String header) throws Exception {
        byte[] h = header.getBytes(StandardCharsets.UTF_8);
        out.writeInt(4 + h.length);
        out.writeInt(h.length);
        out.write(h);
        out.flush();
    }

    private static String read(DataInputStream in) throws Exception {
        int length = in.readInt();
        int h = in.readInt();
        byte[] header = new byte[h];
        in.readFully(header);
        in.skipNBytes(length - 4 - h);
        return new String(header, StandardCharsets.UTF_8);
    }

    @Test
    void aClientInAnotherProcessAskingForCudaIpcWithoutAGpuPathIsToldWhyAndExits() throws Exception {
        // the harness ServiceIpcGpuTest runs on the H200, exercised here: a child JVM on this class path
        ChildJvm.Result child = ChildJvm.runIpcChild(root, 60, "127.0.0.1", Integer.toString(server.port()), "train", "8", "HOST", "1");
        assertEquals(1, child.exitValue(), child.toString());
        assertTrue(child.stderr().contains("delivery CUDA_IPC needs batches in GPU memory"), child.stderr());
        awaitSessions(0);
    }

    @Test
    void aClientThatDisconnectsMidEpochFreesItsSession() throws Exception {
        PrefetchClient c = client().prefetchDepth(2).open();
        assertEquals(1, server.sessions());
        Iterator<RemoteBatch> it = c.iterator();
        it.next().close();
        RemoteBatch held = it.next();
        c.close();
        held.close();
        awaitSessions(0);
        try (PrefetchClient again = client().open()) {
            assertEquals(1, server.sessions());
            assertTrue(again.iterator().hasNext());
        }
        awaitSessions(0);
    }

    @Test
    void closingTheServerReturnsInBoundedTimeAndFreesEverySession() throws Exception {
        PrefetchClient a = client().open();
        PrefetchClient b = client().ranks(1, 2, Partition.EXACT_ONCE).open();
        Iterator<RemoteBatch> ia = a.iterator();
        RemoteBatch held = ia.next();
        b.iterator().next().close();
        assertEquals(2, server.sessions());
        long t0 = System.nanoTime();
        server.close();
        long millis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - t0);
        assertTrue(millis < 5_000, "close took " + millis + " ms");
        assertEquals(0, server.sessions());
        server.close(); // idempotent
        var e = assertThrows(PrefetchServiceException.class, ia::hasNext); // the server closed the connection
        assertTrue(e.getMessage().contains("closed"), e.getMessage());
        held.close();
        a.close();
        b.close();
        assertThrows(java.io.IOException.class, () -> new Socket("127.0.0.1", server.port()).close(), "no longer listening");
    }

    @Test
    void eachSessionsMemoryIsChargedUnderTheServersAllocatorAndComesBackWhenItCloses() throws Exception {
        try (PrefetchClient c = client().prefetchDepth(2).open()) {
            assertTrue(c.iterator().hasNext());
            long held = server.allocator().outstandingBytes();
            assertTrue(held > 0, "the session's loader slots are charged to the server: " + server.allocator().usage());
            assertEquals(held, server.allocator().usage().host(), "host path: plain host memory");
        }
        awaitSessions(0);
        assertEquals(0, server.allocator().outstandingBytes());
    }

    @Test
    void aSessionPastTheServersBudgetGetsAnErrorNamingIt() throws Exception {
        server.close();
        try (dev.gdsloader.memory.NativeAllocator tiny = dev.gdsloader.memory.NativeAllocator.root()
                .newChild("test server budget", 4096, dev.gdsloader.memory.NativeAllocator.UNLIMITED)) {
            server = PrefetchServer.builder(root).allocator(tiny).start();
            var e = assertThrows(PrefetchServiceException.class, () -> client().open());
            assertTrue(e.getMessage().contains("allocator 'test server budget' has a host budget of 4096 B"), e.getMessage());
            awaitSessions(0);
            server.close();
            assertEquals(0, tiny.outstandingBytes());
        }
    }
}
