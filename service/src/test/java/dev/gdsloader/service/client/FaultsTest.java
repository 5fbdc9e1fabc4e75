package dev.gdsloader.service.client;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.gdsloader.formats.DType;
import dev.gdsloader.loader.path.ReadPath;
import dev.gdsloader.service.ChildJvm;
import dev.gdsloader.service.Await;
import dev.gdsloader.service.NettyLeaks;
import dev.gdsloader.service.ServerChild;
import dev.gdsloader.service.server.PrefetchServer;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Iterator;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.CountDownLatch;
import java.util.logging.Handler;
import java.util.logging.LogRecord;
import java.util.logging.Logger;
import org.apache.arrow.flight.FlightClient;
import org.apache.arrow.flight.FlightRuntimeException;
import org.apache.arrow.flight.FlightStatusCode;
import org.apache.arrow.flight.FlightStream;
import org.apache.arrow.flight.Ticket;
import org.apache.arrow.memory.RootAllocator;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;



/**
 * Faults on loopback: a server shutting down tells its streams (UNAVAILABLE "server shutting down", which the Java
 * client reports as such once reconnecting gives up); the client's deadline holds on every wait: the info call to a peer
 * that never answers, and the wait for the next batch from a server process that stopped (SIGSTOP) mid-epoch.
 */
@Timeout(120)
class FaultsTest {
    private static final int RECORDS = 48;

    @TempDir
    Path root;

    @BeforeAll
    static void leaks() {
        NettyLeaks.install();
    }

    @BeforeEach
    void wide() throws Exception {
        // 48 records of 1 MiB: more than gRPC's windows and the socket buffers hold, so streams are in progress
        Files.createDirectories(root.resolve("wide"));
        dev.gdsloader.formats.npy.NpyWriter.write(root.resolve("wide").resolve("x-00000.npy"), DType.UINT8,
                new long[] {RECORDS, 1 << 20}, new byte[RECORDS << 20]);
    }

    @Test
    void aServerShuttingDownTellsItsStreamsAndTheJavaClientSaysSo() throws Exception {
        PrefetchServer server = PrefetchServer.builder(root).start();
        try (RootAllocator a = new RootAllocator();
             PrefetchClient c = PrefetchClient.builder("127.0.0.1", server.port()).dataset("wide").batchSize(1).prefetchDepth(2)
                     .path(ReadPath.HOST).timeout(Duration.ofSeconds(30)).reconnectTimeout(Duration.ofMillis(500)).open()) {
            FlightClient raw = FlightClient.builder(a, server.location()).build();
            FlightStream s = raw.getStream(new Ticket(("{\"version\":4,\"dataset\":\"wide\",\"options\":{\"batchSize\":1,"
                    + "\"prefetchDepth\":2,\"path\":\"HOST\"}}").getBytes(StandardCharsets.UTF_8)));
            try {
                Iterator<RemoteBatch> it = c.iterator();
                it.next().close();
                assertTrue(s.next());
                Thread closer = Thread.ofPlatform().start(server::close);
                // both streams are stalled (their windows full) until the server is closing: new calls are refused then
                FlightClient probe = FlightClient.builder(a, server.location()).build();
                try {
                    Await.until("the server refusing new calls (closing)", () -> {
                        try {
                            probe.listFlights(org.apache.arrow.flight.Criteria.ALL).forEach(f -> { });
                            return false;
                        } catch (FlightRuntimeException refused) {
                            return true;
                        }
                    });
                } finally {
                    probe.close();
                }
                // a plain Flight client reading on: its stream ends UNAVAILABLE "server shutting down"
                FlightRuntimeException e = assertThrows(FlightRuntimeException.class, () -> {
                    while (s.next()) {
                        assertTrue(s.getRoot().getRowCount() > 0); // what was already on its way
                    }
                });
                assertEquals(FlightStatusCode.UNAVAILABLE, e.status().code(), e.getMessage());
                assertTrue(e.getMessage().startsWith("server shutting down"), e.getMessage());
                // the Java client, reading on: the same, once reconnecting to the closed server gives up
                PrefetchServiceException pe = assertThrows(PrefetchServiceException.class, () -> {
                    while (it.hasNext()) {
                        it.next().close();
                    }
                });
                assertEquals(FlightStatusCode.UNAVAILABLE, pe.code(), pe.getMessage());
                assertTrue(pe.getMessage().startsWith("prefetch server 127.0.0.1:" + server.port() + ": server shutting down"),
                        pe.getMessage());
                closer.join(Await.HANG.toMillis());
                assertEquals(0, server.sessions());
            } finally {
                s.close();
                raw.close();
                server.close();
            }
        }
        NettyLeaks.check();
    }

    @Test
    void theInfoCallHasTheClientsDeadlineWhenThePeerNeverAnswers() throws Exception {
        try (ServerSocket silent = new ServerSocket(0, 50, java.net.InetAddress.getLoopbackAddress())) {
            CountDownLatch done = new CountDownLatch(1);
            Thread.ofPlatform().daemon().start(() -> {
                try (Socket held = silent.accept()) {
                    held.setKeepAlive(false);
                    done.await(); // accepts, reads nothing, says nothing
                } catch (Exception ignored) {
                    // closed by the test
                }
            });
            PrefetchServiceException e = assertThrows(PrefetchServiceException.class, () -> PrefetchClient.builder("127.0.0.1",
                    silent.getLocalPort()).dataset("wide").batchSize(1).timeout(Duration.ofMillis(800)).open().close());
            assertEquals(FlightStatusCode.TIMED_OUT, e.code(), e.getMessage());
            done.countDown();
        }
    }

    /**
     * open() during a server's shutdown failed at once with gRPC's raw "Connection closed after GOAWAY" while streams
     * reconnect: its GetFlightInfo is retried the same way, and said plainly when retrying gives up.
     */
    @Test
    void openRetriesAnUnavailableServerUntilOneListensElseSaysHowLongItRetried() throws Exception {
        int port;
        try (ServerSocket free = new ServerSocket(0, 50, java.net.InetAddress.getLoopbackAddress())) {
            port = free.getLocalPort();
        }
        PrefetchServiceException e = assertThrows(PrefetchServiceException.class, () -> PrefetchClient.builder("127.0.0.1", port)
                .dataset("wide").batchSize(8).timeout(Duration.ofSeconds(1)).reconnectTimeout(Duration.ofMillis(1500)).open().close());
        assertEquals(FlightStatusCode.UNAVAILABLE, e.code(), e.getMessage());
        assertTrue(e.getMessage().startsWith("prefetch server 127.0.0.1:" + port + " unavailable: "), e.getMessage());
        assertTrue(e.getMessage().matches("(?s).*\\(retried for \\d+ ms\\)"), e.getMessage());

        CountDownLatch retrying = new CountDownLatch(1);
        Handler said = new Handler() {
            @Override
            public void publish(LogRecord r) {
                if (r.getMessage().contains("unavailable") && r.getMessage().contains("retrying for up to")) {
                    retrying.countDown();
                }
            }

            @Override
            public void flush() {
            }

            @Override
            public void close() {
            }
        };
        Logger log = Logger.getLogger("dev.gdsloader.service.client");
        java.util.logging.Level level = log.getLevel();
        log.setLevel(java.util.logging.Level.INFO); // as -Dgdsloader.log=INFO: gds-loader logs WARNING and above by default
        log.addHandler(said);
        java.util.concurrent.CompletableFuture<PrefetchClient> opening;
        try {
            opening = java.util.concurrent.CompletableFuture.supplyAsync(
                    () -> PrefetchClient.builder("127.0.0.1", port).dataset("wide").batchSize(8).path(ReadPath.HOST)
                            .timeout(Duration.ofSeconds(2)).reconnectTimeout(Duration.ofMinutes(2)).open());
            assertTrue(retrying.await(Await.HANG.toSeconds(), TimeUnit.SECONDS), "the client said it retries");
        } finally {
            log.removeHandler(said);
            log.setLevel(level);
        }
        assertTrue(!opening.isDone(), "open() returned without a server"); // it is retrying: nothing listens yet
        try (PrefetchServer server = PrefetchServer.builder(root).port(port).start();
             PrefetchClient c = opening.get(Await.HANG.toSeconds(), TimeUnit.SECONDS)) {
            long records = 0;
            for (RemoteBatch b : c) {
                try (b) {
                    records += b.records();
                }
            }
            assertEquals(RECORDS, records);
            assertEquals(port, server.port());
        }
    }

    @Test
    void theWaitForTheNextBatchHasTheClientsDeadlineWhenTheServerStops() throws Exception {
        Process p = ChildJvm.command(ServerChild.class, List.of(), root.toString()).redirectError(root.resolve("server.err").toFile())
                .start();
        try {
            BufferedReader out = new BufferedReader(new InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8));
            String first = out.readLine();
            assertTrue(first != null && first.startsWith("port "), first + " " + Files.readString(root.resolve("server.err")));
            int port = Integer.parseInt(first.substring(5));
            // a first client with the default deadline warms the fresh server JVM (a loaded runner's cold JIT can take
            // longer than the deadline under test to answer a first call)
            try (PrefetchClient warm = PrefetchClient.builder("127.0.0.1", port).dataset("wide").batchSize(1)
                    .path(ReadPath.HOST).open()) {
                warm.iterator().next().close();
            }
            try (PrefetchClient c = PrefetchClient.builder("127.0.0.1", port).dataset("wide").batchSize(1).prefetchDepth(2)
                    .path(ReadPath.HOST).timeout(Duration.ofSeconds(8)).reconnectTimeout(Duration.ofSeconds(1)).open()) {
                Iterator<RemoteBatch> it = c.iterator();
                it.next().close();
                Process stop = new ProcessBuilder("kill", "-STOP", Long.toString(p.pid())).inheritIO().start();
                assertEquals(0, stop.waitFor());
                int read = 1;
                PrefetchServiceException e = null;
                try {
                    while (it.hasNext()) { // what was already on its way, then nothing
                        it.next().close();
                        read++;
                    }
                } catch (PrefetchServiceException thrown) {
                    e = thrown;
                }
                assertTrue(e != null, "the epoch ended (" + read + " of " + RECORDS + " batches) instead of timing out");
                assertEquals(FlightStatusCode.TIMED_OUT, e.code(), e.getMessage());
                assertTrue(e.getMessage().contains("sent nothing for 8000 ms"), e.getMessage());
                assertTrue(read < RECORDS, read + " batches before the deadline");
            }
        } finally {
            new ProcessBuilder("kill", "-CONT", Long.toString(p.pid())).start().waitFor();
            p.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
        }
    }
}
