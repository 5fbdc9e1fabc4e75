package dev.gdsloader.service.server;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.gdsloader.service.LoadAttacks;
import java.lang.management.ManagementFactory;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.apache.arrow.flight.FlightClient;
import org.apache.arrow.flight.FlightStream;
import org.apache.arrow.flight.Ticket;
import org.apache.arrow.memory.RootAllocator;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * The client does not choose the server's threads (issue 21, finding 4): 16 sessions in progress, each asking for 256
 * I/O threads, on a real server on loopback, leave the server's live threads bounded by its own settings: its I/O pool
 * at most {@link ServerLimits#ioThreads()}, no loader thread of its own, one reader per session.
 */
@Timeout(180)
class ServerThreadsTest {
    private static final int SESSIONS = 16;
    private static final int POOL = 4;

    @TempDir
    Path root;

    private static long threads(String prefix) {
        return Thread.getAllStackTraces().keySet().stream().filter(t -> t.isAlive() && t.getName().startsWith(prefix)).count();
    }

    @Test
    void sixteenSessionsAsking256ThreadsEachLeaveTheThreadCountBoundedByTheServersSettings() throws Exception {
        LoadAttacks.writeDatasets(root);
        ServerLimits limits = ServerLimits.defaults().withIoThreads(POOL).withSessions(SESSIONS).withSessionsPerClient(SESSIONS)
                .withCallsPerConnection(SESSIONS);
        // 1 MiB batches: each stream stays in progress, its ring and gRPC's window full, while the next opens
        Ticket greedy = new Ticket(("{\"version\":4,\"dataset\":\"wide\",\"options\":{\"batchSize\":1,\"prefetchDepth\":2,"
                + "\"ioThreads\":256,\"path\":\"HOST\"}}").getBytes(StandardCharsets.UTF_8));
        try (PrefetchServer server = PrefetchServer.builder(root).limits(limits).start(); RootAllocator a = new RootAllocator()) {
            int before = ManagementFactory.getThreadMXBean().getThreadCount();
            long loaderThreadsBefore = threads("gdsloader-io-");
            long readersBefore = threads("gdsloader-reader");
            List<FlightClient> clients = new ArrayList<>();
            List<FlightStream> streams = new ArrayList<>();
            try {
                for (int i = 0; i < SESSIONS; i++) {
                    FlightClient c = FlightClient.builder(a, server.location()).build();
                    clients.add(c);
                    FlightStream s = c.getStream(greedy);
                    assertTrue(s.next(), "session " + i + " sends its first batch");
                    streams.add(s);
                }
                assertEquals(SESSIONS, server.guard().calls().sessionsInProgress());
                int after = ManagementFactory.getThreadMXBean().getThreadCount();
                long pool = threads(SessionCeilings.THREAD_PREFIX);
                assertTrue(pool >= 1 && pool <= POOL, pool + " threads in the server's I/O pool, at most " + POOL);
                assertTrue(server.ceilings().poolThreads() <= POOL, server.ceilings().poolThreads() + " pool threads");
                assertEquals(loaderThreadsBefore, threads("gdsloader-io-"), "no loader starts threads of its own");
                assertTrue(threads("gdsloader-reader") - readersBefore <= SESSIONS, "one reader per session at most");
                // what else grew is the transports' (event loops, gRPC's executor: one thread per call in progress), the
                // clients' in this JVM included; 16 x 256 I/O threads would be 4,096
                int cores = Runtime.getRuntime().availableProcessors();
                int bound = POOL + SESSIONS + SESSIONS + 4 * 2 * cores + 64;
                assertTrue(after - before <= bound, (after - before) + " more threads with " + SESSIONS
                        + " sessions asking 256 each; bound " + bound);
            } finally {
                LoadAttacks.cancelAndClose(streams, clients);
            }
        }
    }
}
