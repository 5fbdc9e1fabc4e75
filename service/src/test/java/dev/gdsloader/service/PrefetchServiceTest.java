package dev.gdsloader.service;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.gdsloader.formats.DType;
import dev.gdsloader.loader.Batch;
import dev.gdsloader.loader.GdsLoader;
import dev.gdsloader.loader.LoaderOptions;
import dev.gdsloader.loader.LoaderState;
import dev.gdsloader.loader.path.ReadPath;
import dev.gdsloader.loader.sampler.Partition;
import dev.gdsloader.loader.sampler.SamplerOptions;
import dev.gdsloader.loader.sampler.Shuffle;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.time.Duration;
import java.util.ArrayList;
import java.util.BitSet;
import java.util.Iterator;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.apache.arrow.flight.Criteria;
import org.apache.arrow.flight.FlightClient;
import org.apache.arrow.flight.FlightDescriptor;
import org.apache.arrow.flight.FlightInfo;
import org.apache.arrow.flight.FlightRuntimeException;
import org.apache.arrow.flight.FlightStatusCode;
import org.apache.arrow.flight.FlightStream;
import org.apache.arrow.flight.Location;
import org.apache.arrow.flight.Ticket;
import org.apache.arrow.memory.RootAllocator;
import org.apache.arrow.vector.BigIntVector;
import org.apache.arrow.vector.types.pojo.Schema;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** The prefetch service on Arrow Flight with host delivery: a real server on loopback, real clients, real shard files. */
@Timeout(120)
class PrefetchServiceTest extends ServiceTestBase {

    private PrefetchClient.Builder client() {
        return PrefetchClient.builder("127.0.0.1", server.port()).dataset("train").batchSize(8).path(ReadPath.HOST)
                .timeout(Duration.ofSeconds(30));
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

    /** The process registry's linger is the server's while it runs (each epoch's session reuses the registrations). */
    @Test
    void aServerSetsTheRegistrationLingerWhileItRunsAndRestoresItOnClose() throws Exception {
        dev.gdsloader.cuda.MappedShards reg = dev.gdsloader.cuda.MappedShards.process();
        assertEquals(java.time.Duration.ofSeconds(PrefetchServer.DEFAULT_REGISTRATION_LINGER_SECONDS), reg.linger(),
                "the base class's server runs with the default");
        server.close();
        assertEquals(java.time.Duration.ZERO, reg.linger(), "restored on close");
        try (PrefetchServer s = PrefetchServer.builder(root).port(0).registrationLinger(java.time.Duration.ofMillis(1500)).start()) {
            assertEquals(java.time.Duration.ofMillis(1500), reg.linger(), "the linger of the server on port " + s.port());
        }
        assertEquals(java.time.Duration.ZERO, reg.linger());
        assertThrows(IllegalArgumentException.class, () -> PrefetchServer.builder(root).registrationLinger(java.time.Duration.ofSeconds(-1)));
    }

    /** Two servers in one process: the registry keeps the longer linger; closing one leaves the other's. */
    @Test
    void closingOneOfTwoServersLeavesTheOthersRegistrationLinger() throws Exception {
        dev.gdsloader.cuda.MappedShards reg = dev.gdsloader.cuda.MappedShards.process();
        server.close();
        PrefetchServer longer = PrefetchServer.builder(root).port(0).registrationLinger(java.time.Duration.ofSeconds(90)).start();
        try {
            try (PrefetchServer shorter = PrefetchServer.builder(root).port(0).registrationLinger(java.time.Duration.ofSeconds(5)).start()) {
                assertEquals(java.time.Duration.ofSeconds(90), reg.linger(), "the longer of the lingers of the servers on ports "
                        + longer.port() + " and " + shorter.port());
            }
            assertEquals(java.time.Duration.ofSeconds(90), reg.linger(), "the shorter server's close leaves the other's linger");
            PrefetchServer shorter = PrefetchServer.builder(root).port(0).registrationLinger(java.time.Duration.ofSeconds(5)).start();
            longer.close();
            assertEquals(java.time.Duration.ofSeconds(5), reg.linger(), "the longer server's close leaves the shorter one's linger");
            shorter.close();
        } finally {
            longer.close(); // closing twice does nothing
        }
        assertEquals(java.time.Duration.ZERO, reg.linger(), "no server left, no linger");
    }

    /** Every sampler (and ranks, padding, drop_last): the same batches, records and bytes as a loader in this process. */
    @Test
    void everySamplerMatchesAnInProcessLoaderByteForByte() throws Exception {
        List<SamplerOptions> samplers = List.of(SamplerOptions.sequential(),
                SamplerOptions.sequential().withShuffle(Shuffle.GLOBAL, 11),
                SamplerOptions.sequential().withShuffle(Shuffle.SHARD_BLOCKS, 3).withBlockRecords(4),
                SamplerOptions.sequential().withShuffle(Shuffle.GLOBAL, 5).withRanks(1, 3, Partition.PAD),
                SamplerOptions.sequential().withShuffle(Shuffle.SHARD_BLOCKS, 3).withBlockRecords(4).withRanks(2, 3,
                        Partition.EXACT_ONCE).withDropLast(true));
        for (SamplerOptions s : samplers) {
            LoaderOptions o = LoaderOptions.defaults().withBatchSize(6).withPath(ReadPath.HOST).withPrefetchDepth(2).withSampler(s);
            for (int epoch = 0; epoch < 2; epoch++) {
                List<long[]> local = new ArrayList<>();
                List<Integer> localPadding = new ArrayList<>();
                try (GdsLoader loader = GdsLoader.builder(root.resolve("train")).options(o)
                        .resumeFrom(epoch == 0 ? null : new LoaderState(epoch, 0, RECORDS, 6,
                                s.blockRecords() == 0 ? s.withBlockRecords(6) : s)).build()) {
                    for (Batch b : loader) {
                        try (b) {
                            local.add(b.recordIndices());
                            localPadding.add(b.paddingCount());
                        }
                    }
                }
                try (PrefetchClient c = PrefetchClient.builder("127.0.0.1", server.port()).dataset("train").options(o)
                        .timeout(Duration.ofSeconds(30)).open()) {
                    Iterator<RemoteBatch> it = c.iterator();
                    if (epoch == 1) {
                        while (it.hasNext()) {
                            it.next().close();
                        }
                        it = c.iterator();
                    }
                    int i = 0;
                    while (it.hasNext()) {
                        try (RemoteBatch b = it.next()) {
                            assertEquals(epoch, b.epoch());
                            assertArrayEquals(local.get(i), b.recordIndices(), s + " epoch " + epoch + " batch " + i);
                            assertEquals(localPadding.get(i), b.paddingCount());
                            checkBytes(b);
                            i++;
                        }
                    }
                    assertEquals(local.size(), i, s + ": batches");
                }
            }
        }
        awaitSessions(0);
    }

    @Test
    void aBadDatasetOrOptionGetsAStatusAndOneLineNamingItAndTheServerKeepsServing() throws Exception {
        var unknown = assertThrows(PrefetchServiceException.class, () -> client().dataset("nope").open());
        assertTrue(unknown.getMessage().contains("unknown dataset 'nope'"), unknown.getMessage());
        assertEquals(FlightStatusCode.NOT_FOUND, unknown.code());
        var outside = assertThrows(PrefetchServiceException.class, () -> client().dataset("../..").open());
        assertTrue(outside.getMessage().contains("dataset '../..' refused"), outside.getMessage());
        assertEquals(FlightStatusCode.UNAUTHORIZED, outside.code(), "gRPC PERMISSION_DENIED");
        var batch = assertThrows(PrefetchServiceException.class, () -> client().batchSize(0).open());
        assertTrue(batch.getMessage().contains("batchSize"), batch.getMessage());
        assertEquals(FlightStatusCode.INVALID_ARGUMENT, batch.code());
        var depth = assertThrows(IllegalArgumentException.class, () -> client().prefetchDepth(65));
        assertTrue(depth.getMessage().contains("prefetchDepth"), depth.getMessage());
        var column = assertThrows(PrefetchServiceException.class, () -> client().columns("z").open());
        assertTrue(column.getMessage().contains("'z'"), column.getMessage());
        var ipc = assertThrows(PrefetchServiceException.class, () -> client().delivery(Delivery.CUDA_IPC).open());
        assertTrue(ipc.getMessage().contains("CUDA_IPC needs batches in GPU memory"), ipc.getMessage());
        var devicePath = assertThrows(PrefetchServiceException.class, () -> client().path(ReadPath.BOUNCE).open());
        assertTrue(devicePath.getMessage().contains("delivery HOST reads through host memory"), devicePath.getMessage());
        if (!dev.gdsloader.cuda.Cuda.availability().available()) {
            var noGpu = assertThrows(PrefetchServiceException.class,
                    () -> client().path(ReadPath.BOUNCE).delivery(Delivery.CUDA_IPC).open());
            assertEquals(FlightStatusCode.INVALID_ARGUMENT, noGpu.code(), "a path this machine cannot take: " + noGpu.getMessage());
        }
        for (var e : List.of(unknown, outside, batch, column, ipc, devicePath)) {
            assertEquals(1, e.getMessage().lines().count(), e.getMessage());
        }
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

    /** Raw Flight calls, as a client in another language makes them: strict requests, refused by name. */
    @Test
    @SuppressWarnings("try") // Flight's close() declares InterruptedException; the test method throws Exception
    void aRequestOfAnotherVersionAnUnknownFieldOrOptionIsRefusedByName() throws Exception {
        try (RootAllocator a = new RootAllocator();
             FlightClient f = FlightClient.builder(a, Location.forGrpcInsecure("127.0.0.1", server.port())).build()) {
            String[][] cases = {
                {"{\"version\":4,\"dataset\":\"train\",\"options\":{\"batchSize\":4},\"bogus\":1}", "unknown request field 'bogus'"},
                {"{\"version\":4,\"dataset\":\"train\",\"options\":{\"batchSize\":4,\"bogus\":1}}", "unknown option 'bogus'"},
                {"{\"version\":4,\"dataset\":\"train\",\"options\":{\"batchSize\":4,\"prefetchDepth\":65}}", "prefetchDepth must be 1..64"},
                {"{\"version\":4,\"dataset\":\"train\",\"options\":{\"sampler\":{\"shuffle\":\"global\"}}}", "batchSize must be > 0"},
                {"{\"version\":2,\"dataset\":\"train\",\"options\":{\"batchSize\":4}}", "protocol version 2 is not supported: this server speaks version 4"},
                {"{\"version\":4.5,\"dataset\":\"train\",\"options\":{\"batchSize\":4}}", "'version' must be the integer 4"},
                {"{\"version\":\"3\",\"dataset\":\"train\",\"options\":{\"batchSize\":4}}", "'version' must be the integer 4"},
                {"{\"dataset\":\"train\"}", "'version' must be the integer 4"},
                {"[]", "request must be a JSON object"},
                // streamed, and the next state said epoch -9223372036854775808: no epoch can follow it
                {"{\"version\":4,\"dataset\":\"train\",\"options\":{\"batchSize\":4},\"epoch\":9223372036854775807}",
                    "'epoch' must be an integer 0..9223372036854775806 (an epoch that another can follow), got 9223372036854775807"},
                {"{\"version\":4,\"dataset\":\"train\",\"options\":{\"batchSize\":4},\"delivery\":\"CUDA_IPC\"}", "is a DoExchange"},
            };
            for (String[] c : cases) {
                var e = assertThrows(FlightRuntimeException.class, () -> {
                    try (FlightStream s = f.getStream(new Ticket(c[0].getBytes(StandardCharsets.UTF_8)))) {
                        s.next();
                    }
                }, c[0]);
                assertEquals(FlightStatusCode.INVALID_ARGUMENT, e.status().code(), c[0] + " -> " + e.getMessage());
                assertTrue(e.getMessage().contains(c[1]), c[0] + " -> " + e.getMessage());
            }
        }
        try (RootAllocator a = new RootAllocator();
             FlightClient f = FlightClient.builder(a, Location.forGrpcInsecure("127.0.0.1", server.port())).build()) {
            String[][] exchanges = {
                {"{\"version\":4,\"dataset\":\"train\",\"options\":{\"batchSize\":4}}", "is a DoGet"},
                {"{\"version\":4,\"dataset\":\"train\",\"options\":{\"batchSize\":4,\"path\":\"HOST\"},\"delivery\":\"CUDA_IPC\"}",
                    "delivery CUDA_IPC needs batches in GPU memory, but path HOST was asked for"},
            };
            for (String[] c : exchanges) {
                var e = assertThrows(FlightRuntimeException.class, () -> {
                    try (var rw = f.doExchange(FlightDescriptor.command(c[0].getBytes(StandardCharsets.UTF_8)))) {
                        rw.getReader().next();
                    }
                }, c[0]);
                assertEquals(FlightStatusCode.INVALID_ARGUMENT, e.status().code(), c[0] + " -> " + e.getMessage());
                assertTrue(e.getMessage().contains(c[1]), c[0] + " -> " + e.getMessage());
            }
        }
        awaitSessions(0);
        try (PrefetchClient c = client().open()) {
            assertTrue(c.iterator().hasNext());
        }
    }

    /** What a pyarrow client sees: ListFlights, GetFlightInfo and a DoGet stream with the contract's schema and metadata. */
    @Test
    @SuppressWarnings("try") // Flight's close() declares InterruptedException; the test method throws Exception
    void listFlightsGetFlightInfoAndDoGetFollowTheContract() throws Exception {
        Files.createDirectories(root.resolve("empty-dir"));
        try (RootAllocator a = new RootAllocator();
             FlightClient f = FlightClient.builder(a, Location.forGrpcInsecure("127.0.0.1", server.port())).build()) {
            List<FlightInfo> list = new ArrayList<>();
            f.listFlights(Criteria.ALL).forEach(list::add);
            assertEquals(1, list.size(), "the one dataset; a directory without shards is not listed");
            assertEquals(List.of("train"), list.get(0).getDescriptor().getPath());
            assertEquals(RECORDS, list.get(0).getRecords());
            Request r = new Request("train", LoaderOptions.defaults().withBatchSize(32), Delivery.HOST, 0, null);
            FlightInfo info = f.getInfo(FlightDescriptor.command(r.toBytes()));
            assertEquals(RECORDS, info.getRecords());
            assertEquals(-1, info.getBytes());
            String meta = new String(info.getAppMetadata(), StandardCharsets.UTF_8);
            assertTrue(meta.contains("\"pathTaken\":\"HOST\"") && meta.contains("\"batchesPerEpoch\":4"), meta);
            assertEquals(1, info.getEndpoints().size());
            assertEquals(server.port(), info.getEndpoints().get(0).getLocations().get(0).getUri().getPort());
            Schema schema = info.getSchemaOptional().orElseThrow();
            assertEquals("4", schema.getCustomMetadata().get("gdsloader.version"));
            assertEquals(List.of("x", "y", "_record", "_padding"), schema.getFields().stream().map(x -> x.getName()).toList());
            assertEquals("UINT8", schema.findField("x").getMetadata().get("gdsloader.dtype"));
            assertEquals("[20]", schema.findField("x").getMetadata().get("gdsloader.shape"));
            assertEquals("[]", schema.findField("y").getMetadata().get("gdsloader.shape"));
            assertEquals("FixedSizeList(20)", schema.findField("x").getType().toString());
            try (FlightStream s = f.getStream(info.getEndpoints().get(0).getTicket())) {
                int batches = 0;
                long rows = 0;
                while (s.next()) {
                    var m = s.getLatestMetadata();
                    byte[] mb = new byte[(int) m.readableBytes()];
                    m.getBytes(0, mb);
                    String ms = new String(mb, StandardCharsets.UTF_8);
                    assertTrue(ms.startsWith("{\"epoch\":0,\"index\":" + batches + ",\"padding\":0,\"state\":{"), ms);
                    BigIntVector rec = (BigIntVector) s.getRoot().getVector("_record");
                    assertEquals(rows, rec.get(0), "sequential order");
                    rows += s.getRoot().getRowCount();
                    batches++;
                }
                assertEquals(4, batches);
                assertEquals(RECORDS, rows);
            }
        }
        awaitSessions(0);
    }

    /**
     * A server closed mid-epoch and a new one started on the same port: the client reconnects and resumes after the
     * last batch it handed out, so the epoch has every record exactly once.
     */
    @Test
    void aClientResumesMidEpochOnANewServerOnTheSamePortExactlyOnce() throws Exception {
        int port = server.port();
        try (PrefetchClient c = client().shuffle(Shuffle.GLOBAL, 9).prefetchDepth(2).reconnectTimeout(Duration.ofSeconds(30)).open()) {
            BitSet seen = new BitSet();
            int batches = 0;
            Iterator<RemoteBatch> it = c.iterator();
            while (it.hasNext()) {
                try (RemoteBatch b = it.next()) {
                    checkBytes(b);
                    for (long r : b.recordIndices()) {
                        assertFalse(seen.get((int) r), "record " + r + " twice");
                        seen.set((int) r);
                    }
                    batches++;
                }
                if (batches == 5) {
                    server.close();
                    server = PrefetchServer.builder(root).port(port).start();
                }
            }
            assertEquals(RECORDS, seen.cardinality(), "every record once across the restart");
            assertEquals(c.batchesPerEpoch(), batches);
            assertEquals(13, batches);
            assertEquals(1, epoch(c, 1).size() / RECORDS, "the next epoch streams from the new server");
        }
        awaitSessions(0);
    }

    /**
     * A client that stops reading holds at most its ring on the server: the loader cannot run past the slots gRPC
     * still holds, measured by both allocators; a second client beside it gets each batch within a second.
     */
    @Test
    void aStalledClientHoldsAtMostItsRingAndAnotherClientKeepsGettingBatches() throws Exception {
        int ring = 2;
        int batchSize = 1;
        long batchBytes = wide();
        try (PrefetchClient stalled = PrefetchClient.builder("127.0.0.1", server.port()).dataset("wide").batchSize(batchSize)
                .prefetchDepth(ring).path(ReadPath.HOST).timeout(Duration.ofSeconds(30)).open()) {
            Iterator<RemoteBatch> it = stalled.iterator();
            it.next().close(); // the stream is open; now the client stops reading
            long ringNative = server.allocator().outstandingBytes();
            Thread.sleep(1500);
            long held = server.arrowAllocator().getAllocatedMemory();
            // wrapped batch memory in flight (at most the ring's batches) plus a margin of 512 KiB for bookkeeping
            // columns, metadata and Flight's own buffers (2.25 MiB measured of a 48 MiB epoch)
            assertTrue(held <= ring * batchBytes + (512 << 10), "server Arrow memory " + held + " B for a ring of " + ring + " x "
                    + batchBytes + " B");
            assertEquals(ringNative, server.allocator().outstandingBytes(), "the loader ring is all it holds natively");
            try (PrefetchClient other = client().open()) {
                long t0 = System.nanoTime();
                for (RemoteBatch b : other) {
                    try (b) {
                        long ms = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - t0);
                        assertTrue(ms < 1000, "a batch took " + ms + " ms beside a stalled client");
                        checkBytes(b);
                    }
                    t0 = System.nanoTime();
                }
            }
            awaitSessions(1); // the other client's session freed, the stalled stream's still held
        }
        awaitSessions(0);
    }

    /**
     * Writes dataset {@code wide}: {@link #WIDE_RECORDS} records of one column of 1 MiB each, more than gRPC's windows and
     * the socket buffers hold, so a stream that is not read stays open.
     *
     * @return bytes per record
     */
    private long wide() throws Exception {
        int recordBytes = 1 << 20;
        Files.createDirectories(root.resolve("wide"));
        dev.gdsloader.formats.npy.NpyWriter.write(root.resolve("wide").resolve("x-00000.npy"), DType.UINT8,
                new long[] {WIDE_RECORDS, recordBytes}, new byte[WIDE_RECORDS * recordBytes]);
        return recordBytes;
    }

    private static final int WIDE_RECORDS = 48;

    /**
     * A closing server ends its streams with UNAVAILABLE "server shutting down" and frees their sessions; the client,
     * reading on, gets that status once reconnecting gives up. (A client that stops reading keeps the batches gRPC holds
     * for it until it goes away: the server's close then waits its 15 s and says which session it left.)
     */
    @Test
    void closingTheServerTellsAReadingClientAndFreesItsSession() throws Exception {
        wide();
        try (PrefetchClient a = client().dataset("wide").batchSize(1).reconnectTimeout(Duration.ofMillis(500)).open()) {
            Iterator<RemoteBatch> ia = a.iterator();
            ia.next().close();
            assertEquals(1, server.sessions());
            long t0 = System.nanoTime();
            Thread closer = Thread.ofPlatform().start(server::close);
            var e = assertThrows(PrefetchServiceException.class, () -> {
                while (ia.hasNext()) {
                    ia.next().close();
                }
            });
            closer.join(30_000);
            long millis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - t0);
            assertTrue(millis < 6_000, "close took " + millis + " ms");
            assertEquals(FlightStatusCode.UNAVAILABLE, e.code(), e.getMessage());
            assertEquals(0, server.sessions());
            server.close(); // idempotent
        }
    }

    /**
     * A client that stopped reading does not hold up the server's close: its connection is closed (gRPC's own close would
     * wait for a GOAWAY queued behind the unread data), the batches gRPC held for it come back and its session is freed.
     */
    @Test
    void aClientThatStoppedReadingDoesNotHoldUpTheServersClose() throws Exception {
        wide();
        try (PrefetchClient stalled = client().dataset("wide").batchSize(1).reconnectTimeout(Duration.ofMillis(500)).open()) {
            stalled.iterator().next().close();
            assertEquals(1, server.sessions());
            long t0 = System.nanoTime();
            server.close();
            long millis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - t0);
            assertTrue(millis < 6_000, "close took " + millis + " ms");
            assertEquals(0, server.sessions(), "the stalled stream's session is freed");
            assertEquals(0, server.allocator().outstandingBytes());
        }
    }

    @Test
    void aClientThatDisconnectsMidEpochFreesItsSession() throws Exception {
        PrefetchClient c = client().prefetchDepth(2).open();
        Iterator<RemoteBatch> it = c.iterator();
        it.next().close();
        RemoteBatch held = it.next();
        assertEquals(1, server.sessions());
        c.close();
        assertThrows(IllegalStateException.class, () -> held.column("x").hostBuffer(), "closed with its client");
        awaitSessions(0);
        try (PrefetchClient again = client().open()) {
            int batches = 0;
            for (Iterator<RemoteBatch> a = again.iterator(); a.hasNext(); batches++) {
                a.next().close();
            }
            assertTrue(batches > 0, "a new client reads an epoch after the old one's session was freed");
        }
        awaitSessions(0);
    }

    /**
     * A client whose server goes away mid-epoch throws once reconnecting gives up; a process that lets the exception
     * end {@code main} without closing the client must still exit (gRPC's threads are daemons).
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

    @Test
    void aClientInAnotherProcessAskingForCudaIpcWithoutAGpuPathIsToldWhyAndExits() throws Exception {
        // the harness ServiceIpcGpuTest runs on the H200, exercised here: a child JVM on this class path
        ChildJvm.Result child = ChildJvm.runIpcChild(root, 60, "127.0.0.1", Integer.toString(server.port()), "train", "8", "HOST", "1");
        assertEquals(1, child.exitValue(), child.toString());
        assertTrue(child.stderr().contains("delivery CUDA_IPC needs batches in GPU memory"), child.stderr());
        awaitSessions(0);
    }

    @Test
    void eachSessionsMemoryIsChargedUnderTheServersAllocatorAndComesBackWhenItEnds() throws Exception {
        try (PrefetchClient c = client().prefetchDepth(2).open()) {
            Iterator<RemoteBatch> it = c.iterator();
            assertTrue(it.hasNext());
            // one snapshot: the session may end (its small epoch all sent) between two separate reads
            dev.gdsloader.memory.MemoryUsage u = server.allocator().usage();
            assertTrue(u.outstandingBytes() > 0, "the session's loader slots are charged to the server: " + u);
            assertEquals(u.outstandingBytes(), u.host(), "host path: plain host memory: " + u);
            while (it.hasNext()) {
                it.next().close();
            }
        }
        awaitSessions(0);
        // the session stays parked for the client's next epoch (its ring charged), until freed
        assertEquals(1, server.parkedSessions());
        assertTrue(server.allocator().outstandingBytes() > 0, server.allocator().describeOutstanding());
        assertEquals(1, server.freeParkedSessions());
        assertEquals(0, server.allocator().outstandingBytes());
        assertEquals(0, server.arrowAllocator().getAllocatedMemory());
    }

    @Test
    void aSessionPastTheServersBudgetIsRefusedNamingBothSizes() throws Exception {
        server.close();
        try (dev.gdsloader.memory.NativeAllocator tiny = dev.gdsloader.memory.NativeAllocator.root()
                .newChild("test server budget", 4096, dev.gdsloader.memory.NativeAllocator.UNLIMITED)) {
            server = PrefetchServer.builder(root).allocator(tiny).start();
            var e = assertThrows(PrefetchServiceException.class, () -> client().open());
            assertEquals(FlightStatusCode.RESOURCE_EXHAUSTED, e.code());
            assertTrue(e.getMessage().contains("allocator 'test server budget' has a host budget of 4096 B"), e.getMessage());
            assertTrue(e.getMessage().contains("prefetch depth 4 x"), e.getMessage());
            awaitSessions(0);
            server.close();
            assertEquals(0, tiny.outstandingBytes());
        }
        assertNotNull(server);
    }
}
