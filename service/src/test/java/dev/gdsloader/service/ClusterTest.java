package dev.gdsloader.service;

import com.fasterxml.jackson.databind.JsonNode;
import dev.gdsloader.loader.path.ReadPath;
import dev.gdsloader.loader.sampler.Partition;
import dev.gdsloader.loader.sampler.Shuffle;
import dev.gdsloader.service.client.PrefetchClient;
import dev.gdsloader.service.client.PrefetchServiceException;
import dev.gdsloader.service.client.RemoteBatch;
import dev.gdsloader.service.protocol.Delivery;
import dev.gdsloader.service.protocol.Part;
import dev.gdsloader.service.protocol.Protocol;
import dev.gdsloader.service.protocol.Request;
import dev.gdsloader.service.server.Cluster;
import dev.gdsloader.service.server.PrefetchServer;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.BitSet;
import java.util.Iterator;
import java.util.List;
import org.apache.arrow.flight.FlightClient;
import org.apache.arrow.flight.FlightDescriptor;
import org.apache.arrow.flight.FlightEndpoint;
import org.apache.arrow.flight.FlightInfo;
import org.apache.arrow.flight.FlightStatusCode;
import org.apache.arrow.memory.RootAllocator;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;


/**
 * Several servers, each holding one part of a dataset ({@link Cluster}; issue 12, "More than one machine"): three real
 * servers on three loopback ports, each over its own root with its part's real {@code .npy} shards, and four ranks
 * reading through {@link PrefetchClient} from whichever server they ask: every record exactly once per epoch across
 * the ranks, byte-exact, the same order per rank in a second run over fresh servers, and a server's death reported to
 * the ranks that still needed its part while the others finish.
 */
@Timeout(180)
@SuppressWarnings("try") // FlightClient and FlightStream close() may throw InterruptedException
class ClusterTest {
    /** Shards of each part (records): parts of 40, 31 and 38 records, 109 in all. */
    private static final int[][] PARTS = {{23, 17}, {31}, {12, 20, 6}};
    private static final long[] FIRST = {0, 40, 71};
    private static final int RECORDS = 109;
    private static final int WORLD = 4;

    @TempDir
    Path dir;
    private final List<PrefetchServer> servers = new ArrayList<>();

    @BeforeAll
    static void leaks() {
        NettyLeaks.install();
    }

    @AfterEach
    void stop() throws Exception {
        servers.forEach(PrefetchServer::close);
        NettyLeaks.check();
    }

    /** Starts the three servers of a cluster on free loopback ports, server j over root {@code run/part-j}. */
    private List<PrefetchServer> startCluster(String run) throws Exception {
        int[] ports = freePorts();
        List<PrefetchServer> started = new ArrayList<>();
        for (int j = 0; j < PARTS.length; j++) {
            Path root = writePart(run, j);
            PrefetchServer s = PrefetchServer.builder(root).port(ports[j]).cluster(Cluster.parse(members(ports), j)).start();
            servers.add(s);
            started.add(s);
        }
        return started;
    }

    private static int[] freePorts() throws java.io.IOException {
        int[] ports = new int[PARTS.length];
        for (int j = 0; j < PARTS.length; j++) {
            try (ServerSocket s = new ServerSocket(0)) {
                ports[j] = s.getLocalPort();
            }
        }
        return ports;
    }

    private static String members(int[] ports) {
        return String.join(",", Arrays.stream(ports).mapToObj(p -> "127.0.0.1:" + p).toList());
    }

    /** Writes part j's real shards under {@code run/part-j/train}; @return the part's server root */
    private Path writePart(String run, int j) throws java.io.IOException {
        Path root = dir.resolve(run).resolve("part-" + j);
        assertEquals(partRecords(j), ServiceShards.writeFrom(root.resolve("train"), FIRST[j], PARTS[j]));
        return root;
    }

    private static long partRecords(int j) {
        return (j + 1 < FIRST.length ? FIRST[j + 1] : RECORDS) - FIRST[j];
    }

    /** The options {@link #client} sends, for requests made by hand. */
    private static dev.gdsloader.loader.LoaderOptions options(int rank) {
        dev.gdsloader.loader.LoaderOptions o = dev.gdsloader.loader.LoaderOptions.defaults().withBatchSize(8).withPath(ReadPath.HOST)
                .withPrefetchDepth(2);
        return o.withSampler(o.sampler().withShuffle(Shuffle.GLOBAL, 7).withRanks(rank, WORLD, Partition.EXACT_ONCE));
    }

    private static PrefetchClient.Builder client(PrefetchServer asked, int rank, Partition partition) {
        return client(asked.port(), rank, partition);
    }

    private static PrefetchClient.Builder client(int port, int rank, Partition partition) {
        return PrefetchClient.builder("127.0.0.1", port).dataset("train").batchSize(8).path(ReadPath.HOST)
                .shuffle(Shuffle.GLOBAL, 7).ranks(rank, WORLD, partition).prefetchDepth(2)
                .timeout(Duration.ofSeconds(30)).reconnectTimeout(Duration.ofSeconds(2));
    }

    /** Checks a batch's bytes against the files' (by its global record indices) and returns its non-padding records. */
    private static long[] checked(RemoteBatch b) {
        long[] rec = b.recordIndices();
        assertArrayEquals(ServiceShards.expected("x", rec), b.column("x").toByteArray(), b.toString());
        assertArrayEquals(ServiceShards.expected("y", rec), b.column("y").toByteArray(), b.toString());
        return Arrays.copyOf(rec, rec.length - b.paddingCount());
    }

    /** @return per epoch, per rank, the records in the order handed out (each rank asking server rank % 3) */
    private List<List<long[]>> readEpochs(List<PrefetchServer> cluster, int epochs, Partition partition) {
        List<List<long[]>> out = new ArrayList<>();
        List<PrefetchClient> clients = new ArrayList<>();
        try {
            for (int r = 0; r < WORLD; r++) {
                clients.add(client(cluster.get(r % cluster.size()), r, partition).open());
            }
            for (int e = 0; e < epochs; e++) {
                List<long[]> ranks = new ArrayList<>();
                for (PrefetchClient c : clients) {
                    List<Long> order = new ArrayList<>();
                    int batches = 0;
                    for (RemoteBatch b : c) {
                        try (b) {
                            assertEquals(e, b.epoch());
                            for (long r : checked(b)) {
                                order.add(r);
                            }
                            batches++;
                        }
                    }
                    assertEquals(c.batchesPerEpoch(), batches, "batches of the three parts");
                    ranks.add(order.stream().mapToLong(Long::longValue).toArray());
                }
                out.add(ranks);
            }
        } finally {
            clients.forEach(PrefetchClient::close);
        }
        return out;
    }

    private static void assertExactlyOnce(List<long[]> ranks, String what) {
        BitSet seen = new BitSet();
        int n = 0;
        for (int r = 0; r < ranks.size(); r++) {
            for (long i : ranks.get(r)) {
                assertTrue(i >= 0 && i < RECORDS, what + ": rank " + r + " got record " + i + ", outside the dataset");
                assertFalse(seen.get((int) i), what + ": record " + i + " twice (rank " + r + ")");
                seen.set((int) i);
                n++;
            }
        }
        assertEquals(RECORDS, n, what + ": records handed out");
        assertEquals(RECORDS, seen.cardinality(), what + ": every record of the three parts");
    }

    @Test
    void threeServersFourRanksReadEveryRecordOncePerEpochDeterministically() throws Exception {
        List<List<long[]>> first = readEpochs(startCluster("run1"), 2, Partition.EXACT_ONCE);
        for (int e = 0; e < first.size(); e++) {
            assertExactlyOnce(first.get(e), "epoch " + e);
            for (int r = 0; r < WORLD; r++) {
                long[] order = first.get(e).get(r);
                // parts in cluster order: a rank's records run through part 0, then 1, then 2
                for (int i = 1; i < order.length; i++) {
                    assertTrue(part(order[i - 1]) <= part(order[i]), "rank " + r + " reads the parts in order: "
                            + Arrays.toString(order));
                }
            }
        }
        assertFalse(Arrays.equals(first.get(0).get(0), first.get(1).get(0)), "a new shuffle each epoch");
        List<List<long[]>> second = readEpochs(startCluster("run2"), 2, Partition.EXACT_ONCE);
        for (int e = 0; e < first.size(); e++) {
            for (int r = 0; r < WORLD; r++) {
                assertArrayEquals(first.get(e).get(r), second.get(e).get(r), "epoch " + e + " rank " + r + " in a second run");
            }
        }
    }

    @Test
    void paddedRanksCoverEveryRecordAndMarkTheirPadding() throws Exception {
        List<List<long[]>> epochs = readEpochs(startCluster("pad"), 1, Partition.PAD);
        assertExactlyOnce(epochs.get(0), "PAD, padding rows left out");
    }

    private static int part(long record) {
        return record < FIRST[1] ? 0 : record < FIRST[2] ? 1 : 2;
    }

    @Test
    void anyServerAnswersWithTheEndpointsOfEveryPartAndEachRanksPartIsTheLoadersOwnSplitOfIt() throws Exception {
        List<PrefetchServer> cluster = startCluster("info");
        Request req = new Request("train", options(1), Delivery.HOST, 0, null);
        try (RootAllocator a = new RootAllocator()) {
            List<List<FlightEndpoint>> answers = new ArrayList<>();
            for (PrefetchServer s : cluster) {
                try (FlightClient f = FlightClient.builder(a, s.location()).build()) {
                    FlightInfo fi = f.getInfo(FlightDescriptor.command(req.toBytes()));
                    answers.add(fi.getEndpoints());
                    JsonNode meta = Protocol.JSON.readTree(fi.getAppMetadata());
                    assertEquals(RECORDS, meta.path("datasetRecords").asLong());
                    assertEquals(3, meta.path("parts").size());
                }
            }
            assertEquals(answers.get(0), answers.get(1), "server 1 answers as server 0");
            assertEquals(answers.get(0), answers.get(2), "server 2 answers as server 0");
            List<FlightEndpoint> eps = answers.get(0);
            assertEquals(3, eps.size());
            for (int j = 0; j < 3; j++) {
                assertEquals(List.of(cluster.get(j).location()), eps.get(j).getLocations(), "part " + j + "'s server");
                JsonNode t = Protocol.JSON.readTree(eps.get(j).getTicket().getBytes()).path("part");
                assertEquals(j, t.path("index").asInt());
                assertEquals(3, t.path("parts").asInt());
                assertEquals(FIRST[j], t.path("firstRecord").asLong());
                assertEquals(partRecords(j), t.path("records").asLong());
                assertEquals(cluster.get(j).location().getUri().toString(), t.path("location").asText());
                assertTrue(new String(eps.get(j).getAppMetadata(), StandardCharsets.UTF_8).contains("\"index\":" + j));
            }
            // a rank's records in part j are the loader's own split of that part (its sampler over the part's records,
            // rank 1 of 4), numbered from the part's first record: compare with part j's server read alone
            try (PrefetchClient c = client(cluster.get(0), 1, Partition.EXACT_ONCE).open()) {
                List<Long> viaCluster = new ArrayList<>();
                for (RemoteBatch b : c) {
                    try (b) {
                        for (long r : checked(b)) {
                            viaCluster.add(r);
                        }
                    }
                }
                List<Long> alone = new ArrayList<>();
                for (int j = 0; j < 3; j++) {
                    try (FlightClient f = FlightClient.builder(a, cluster.get(j).location()).build();
                         var stream = f.getStream(new org.apache.arrow.flight.Ticket(req.toBytes()))) {
                        while (stream.next()) {
                            var rec = (org.apache.arrow.vector.BigIntVector) stream.getRoot().getVector(Protocol.RECORD_COLUMN);
                            for (int i = 0; i < rec.getValueCount(); i++) {
                                alone.add(FIRST[j] + rec.get(i));
                            }
                        }
                    }
                }
                assertEquals(alone, viaCluster);
            }
        }
    }

    @Test
    void aClosedServerIsReportedToTheRanksThatStillNeedItsPartAndTheOthersFinish() throws Exception {
        List<PrefetchServer> cluster = startCluster("death");
        deadPartOne(cluster.stream().mapToInt(PrefetchServer::port).toArray(), () -> cluster.get(1).close());
    }

    @Test
    void aServerKilledWithSigkillIsReportedToTheRanksThatStillNeedItsPartAndTheOthersFinish() throws Exception {
        int[] ports = freePorts();
        List<Process> children = new ArrayList<>();
        try {
            for (int j = 0; j < PARTS.length; j++) {
                Path root = writePart("kill", j);
                Path err = dir.resolve("server-" + j + ".err");
                Process p = ChildJvm.command(ServerChild.class, List.of(), root.toString(), Integer.toString(ports[j]),
                        members(ports), Integer.toString(j)).redirectError(err.toFile()).start();
                children.add(p);
            }
            for (int j = 0; j < PARTS.length; j++) {
                String first = new java.io.BufferedReader(new java.io.InputStreamReader(children.get(j).getInputStream(),
                        StandardCharsets.UTF_8)).readLine();
                assertEquals("port " + ports[j], first, java.nio.file.Files.readString(dir.resolve("server-" + j + ".err")));
            }
            Process one = children.get(1);
            deadPartOne(ports, () -> {
                one.destroyForcibly(); // SIGKILL
                try {
                    assertTrue(one.waitFor(10, java.util.concurrent.TimeUnit.SECONDS));
                } catch (InterruptedException e) {
                    throw new AssertionError(e);
                }
            });
        } finally {
            for (Process p : children) {
                p.getOutputStream().close(); // end of input: it closes its server and exits
                if (!p.waitFor(30, java.util.concurrent.TimeUnit.SECONDS)) {
                    p.destroyForcibly();
                }
            }
        }
    }

    /**
     * Ranks 0 and 1 read into part 2, ranks 2 and 3 one batch of part 0; {@code kill} ends part 1's server; then ranks
     * 0 and 1 finish their epoch (equal to a run with every server alive), ranks 2 and 3 get an error naming part 1's
     * server and records, and a new client is told which member is unreachable.
     */
    private void deadPartOne(int[] ports, Runnable kill) throws Exception {
        List<PrefetchClient> clients = new ArrayList<>();
        int deadPort = ports[1];
        try {
            for (int r = 0; r < WORLD; r++) {
                clients.add(client(ports[0], r, Partition.EXACT_ONCE).open());
            }
            List<List<Long>> got = new ArrayList<>();
            List<Iterator<RemoteBatch>> its = new ArrayList<>();
            for (int r = 0; r < WORLD; r++) {
                got.add(new ArrayList<>());
                its.add(clients.get(r).iterator());
            }
            // ranks 0 and 1 read into part 2 (past part 1); ranks 2 and 3 read one batch of part 0
            for (int r = 0; r < WORLD; r++) {
                while (its.get(r).hasNext()) {
                    try (RemoteBatch b = its.get(r).next()) {
                        long[] rec = checked(b);
                        for (long i : rec) {
                            got.get(r).add(i);
                        }
                        if (r >= 2 || (rec.length > 0 && part(rec[0]) == 2)) {
                            break;
                        }
                    }
                }
            }
            kill.run(); // part 1's server goes away mid-epoch
            for (int r = 0; r < WORLD; r++) {
                final int rank = r;
                if (r < 2) {
                    while (its.get(r).hasNext()) {
                        try (RemoteBatch b = its.get(r).next()) {
                            for (long i : checked(b)) {
                                got.get(r).add(i);
                            }
                        }
                    }
                    assertTrue(got.get(r).stream().anyMatch(i -> part(i) == 2), "rank " + r + " finished on live servers");
                } else {
                    PrefetchServiceException e = assertThrows(PrefetchServiceException.class, () -> {
                        while (its.get(rank).hasNext()) {
                            try (RemoteBatch b = its.get(rank).next()) {
                                for (long i : checked(b)) {
                                    got.get(rank).add(i);
                                }
                            }
                        }
                    });
                    assertEquals(FlightStatusCode.UNAVAILABLE, e.code(), e.getMessage());
                    assertTrue(e.getMessage().startsWith("prefetch server 127.0.0.1:" + deadPort
                            + " (part 1 of 3 (records [40, 71) at grpc+tcp://127.0.0.1:" + deadPort + ")): "), e.getMessage());
                    assertTrue(e.getMessage().endsWith("(reconnecting for 2000 ms did not help)"), e.getMessage());
                    assertTrue(got.get(r).stream().allMatch(i -> part(i) == 0), "rank " + r + " read only part 0 first");
                    assertNotEquals(0, got.get(r).size());
                }
            }
            // a client opening now is told, by whichever server it asks, which part cannot be reached
            PrefetchServiceException e = assertThrows(PrefetchServiceException.class,
                    () -> client(ports[2], 0, Partition.EXACT_ONCE).open().close());
            assertEquals(FlightStatusCode.UNAVAILABLE, e.code(), e.getMessage());
            assertTrue(e.getMessage().contains("part 1 of 3 at grpc+tcp://127.0.0.1:" + deadPort + " (cluster member '127.0.0.1:"
                    + deadPort + "') is unreachable"), e.getMessage());
            // ranks 0 and 1 got exactly their whole share: the same as a run with every server alive
            List<List<long[]>> alive = readEpochs(startCluster("alive"), 1, Partition.EXACT_ONCE);
            for (int r = 0; r < 2; r++) {
                assertArrayEquals(alive.get(0).get(r), got.get(r).stream().mapToLong(Long::longValue).toArray(), "rank " + r);
            }
        } finally {
            clients.forEach(PrefetchClient::close);
        }
    }

    @Test
    void aServerRefusesATicketForAnotherPartAndAClusterOfOneMemberListedTwice() throws Exception {
        List<PrefetchServer> cluster = startCluster("refuse");
        assertThrows(IllegalArgumentException.class, () -> Cluster.parse("127.0.0.1:1,127.0.0.1:1", 0));
        assertThrows(IllegalArgumentException.class, () -> Cluster.parse("127.0.0.1:1,127.0.0.1:2", 2));
        assertThrows(IllegalArgumentException.class, () -> Cluster.parse("127.0.0.1", 0));
        Path file = dir.resolve("cluster.txt");
        java.nio.file.Files.writeString(file, "# part order\nnode0:8815\n\n  node1:8815  \n[::1]:9000\n");
        Cluster fromFile = Cluster.read(file, 2);
        assertEquals(Cluster.parse("node0:8815, node1:8815,[::1]:9000", 2), fromFile);
        assertEquals("grpc+tcp://[::1]:9000", fromFile.location(2).getUri().toString());
        java.nio.file.Files.writeString(file, "node0:8815\nnode1\n");
        IllegalArgumentException bad = assertThrows(IllegalArgumentException.class, () -> Cluster.read(file, 0));
        assertEquals(file + ": cluster member 'node1' is not host:port", bad.getMessage());
        try (RootAllocator a = new RootAllocator();
             FlightClient f = FlightClient.builder(a, cluster.get(2).location()).build()) {
            Request req = new Request("train", options(0), Delivery.HOST, 0, null);
            byte[] forPart1 = new Part.Ticket(req, new Part(1, 3, 40, 31, cluster.get(1).location().getUri().toString())).toBytes();
            var e = assertThrows(org.apache.arrow.flight.FlightRuntimeException.class, () -> {
                try (var s = f.getStream(new org.apache.arrow.flight.Ticket(forPart1))) {
                    s.next();
                }
            });
            assertEquals(FlightStatusCode.INVALID_ARGUMENT, e.status().code());
            assertTrue(e.getMessage().contains("the request is for part 1 of 3, but this server is part 2 of 3"), e.getMessage());
            byte[] wrongCount = new Part.Ticket(req, new Part(2, 3, 71, 30, cluster.get(2).location().getUri().toString())).toBytes();
            e = assertThrows(org.apache.arrow.flight.FlightRuntimeException.class, () -> {
                try (var s = f.getStream(new org.apache.arrow.flight.Ticket(wrongCount))) {
                    s.next();
                }
            });
            assertTrue(e.getMessage().contains("but this server's dataset holds 38 records"), e.getMessage());
        }
    }
}
