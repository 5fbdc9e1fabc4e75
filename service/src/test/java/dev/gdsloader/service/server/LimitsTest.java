package dev.gdsloader.service.server;

import static dev.gdsloader.service.LoadAttacks.readEpoch;
import static dev.gdsloader.service.LoadAttacks.wideTicket;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.gdsloader.loader.path.ReadPath;
import dev.gdsloader.memory.MemoryKind;
import dev.gdsloader.service.Await;
import dev.gdsloader.service.LoadAttacks;
import dev.gdsloader.service.NettyLeaks;
import dev.gdsloader.service.client.PrefetchClient;
import dev.gdsloader.service.client.PrefetchServiceException;
import dev.gdsloader.service.client.RemoteBatch;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.net.InetAddress;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.arrow.flight.FlightClient;
import org.apache.arrow.flight.FlightDescriptor;
import org.apache.arrow.flight.FlightRuntimeException;
import org.apache.arrow.flight.FlightStatusCode;
import org.apache.arrow.flight.FlightStream;
import org.apache.arrow.memory.RootAllocator;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;



/**
 * Bounded under load, on loopback with real servers, real clients and raw sockets: a half-sent preface or frame is
 * closed after the idle timeout, a message over the limit is refused naming it, calls and sessions beyond their limits
 * are refused RESOURCE_EXHAUSTED naming the limit and its value, connections beyond the limit are refused, a session
 * asking for more memory than the budget is refused naming it. In each, a client beside the attacker gets every batch
 * of an epoch within 1 s, and the server's allocators stay within the budget.
 */
@Timeout(180)
class LimitsTest {
    private static final long BUDGET = 12L << 20;
    private static final ServerLimits LIMITS = ServerLimits.defaults().withConnections(12).withSessions(6).withSessionsPerClient(5)
            .withCallsPerConnection(3).withIdleTimeout(Duration.ofMillis(1500)).withMaxMessageBytes(64 << 10).withMemoryBudget(BUDGET);

    @TempDir
    Path root;
    private PrefetchServer server;
    private Thread sampler;
    private final AtomicLong peakNative = new AtomicLong();
    private final AtomicLong peakArrow = new AtomicLong();
    private volatile boolean sampling = true;

    @BeforeAll
    static void leaks() {
        NettyLeaks.install();
    }

    @BeforeEach
    void start() throws Exception {
        LoadAttacks.writeDatasets(root);
        server = PrefetchServer.builder(root).limits(LIMITS).start();
        sampler = Thread.ofPlatform().daemon().start(() -> {
            while (sampling) {
                peakNative.accumulateAndGet(server.allocator().charged(MemoryKind.Budget.HOST), Math::max);
                peakArrow.accumulateAndGet(server.arrowAllocator().getAllocatedMemory(), Math::max);
                java.util.concurrent.locks.LockSupport.parkNanos(2_000_000); // a sample every 2 ms: a sampler, not a wait
            }
        });
    }

    @AfterEach
    void stop() throws Exception {
        sampling = false;
        sampler.join(5_000);
        server.close();
        NettyLeaks.check();
    }

    /** The server's native memory (sessions' rings) stayed within the budget; its Arrow buffers within it too. */
    private void assertWithinBudget() {
        assertTrue(peakNative.get() <= BUDGET, "native peak " + peakNative.get() + " B > budget " + BUDGET);
        assertTrue(peakArrow.get() <= BUDGET, "Arrow peak " + peakArrow.get() + " B > budget " + BUDGET);
    }

    /**
     * A raw socket: writes {@code bytes} and holds until the server closes it (the read's deadline, against hangs:
     * {@link Await#HANG}).
     */
    private void heldUntilClosed(byte[] bytes) throws IOException {
        try (Socket s = new Socket(InetAddress.ofLiteral("127.0.0.1"), server.port())) {
            s.getOutputStream().write(bytes);
            s.getOutputStream().flush();
            s.setSoTimeout((int) Await.HANG.toMillis());
            InputStream in = s.getInputStream();
            try {
                while (in.read() >= 0) {
                    // the server's SETTINGS, a GOAWAY: read on until it closes
                }
            } catch (SocketTimeoutException e) {
                throw new AssertionError("the server did not close a connection holding a partial preface or frame in "
                        + Await.HANG.toSeconds() + " s", e);
            } catch (IOException reset) {
                // closed by a reset: closed all the same
            }
        }
    }

    private static final byte[] PREFACE = "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n".getBytes(StandardCharsets.US_ASCII);

    @Test
    void halfSentPrefacesAndFramesAreClosedAfterTheIdleTimeoutWhileOthersKeepWorking() throws Exception {
        try (PrefetchClient c = LoadAttacks.bystander(server.port()).open()) {
            readEpoch(c); // warm
            List<Thread> attackers = new ArrayList<>();
            java.util.concurrent.atomic.AtomicInteger closed = new java.util.concurrent.atomic.AtomicInteger();
            byte[] halfPreface = java.util.Arrays.copyOf(PREFACE, 10);
            ByteArrayOutputStream halfFrame = new ByteArrayOutputStream();
            halfFrame.write(PREFACE);
            halfFrame.write(new byte[] {0, 0, 0, 4, 0, 0, 0, 0, 0}); // empty SETTINGS
            halfFrame.write(new byte[] {0, 0x40, 0, 1, 4, 0, 0, 0, 1, 1, 2, 3}); // HEADERS of 16 KiB, 3 bytes sent
            for (byte[] attack : List.of(halfPreface, halfFrame.toByteArray())) {
                for (int i = 0; i < 3; i++) {
                    attackers.add(Thread.ofPlatform().start(() -> {
                        try {
                            heldUntilClosed(attack);
                            closed.incrementAndGet();
                        } catch (IOException e) {
                            throw new AssertionError(e);
                        }
                    }));
                }
            }
            Await.until(() -> "7 connections (6 attackers, the bystander), " + server.guard().connections() + " open",
                    () -> server.guard().connections() >= 7);
            readEpoch(c);
            for (Thread t : attackers) {
                t.join(); // each ends by its socket's deadline
            }
            assertEquals(6, closed.get(), "every attacker's connection was closed by the server (idle timeout 1500 ms)");
            readEpoch(c);
        }
        assertWithinBudget();
    }

    @Test
    void aMessageOverTheLimitIsRefusedNamingIt() throws Exception {
        try (PrefetchClient c = LoadAttacks.bystander(server.port()).open(); RootAllocator a = new RootAllocator()) {
            FlightClient raw = FlightClient.builder(a, server.location()).build();
            try {
                FlightRuntimeException e = assertThrows(FlightRuntimeException.class,
                        () -> raw.getInfo(FlightDescriptor.command(new byte[8 << 20])));
                assertEquals(FlightStatusCode.RESOURCE_EXHAUSTED, e.status().code(), e.getMessage());
                assertTrue(e.getMessage().contains(Integer.toString(64 << 10)), e.getMessage());
                readEpoch(c);
            } finally {
                raw.close();
            }
        }
        assertWithinBudget();
    }

    @Test
    void callsBeyondTheLimitOfAConnectionAreRefusedNamingIt() throws Exception {
        try (PrefetchClient c = LoadAttacks.bystander(server.port()).open(); RootAllocator a = new RootAllocator()) {
            FlightClient raw = FlightClient.builder(a, server.location()).build();
            List<FlightStream> streams = new ArrayList<>();
            try {
                for (int i = 0; i < 3; i++) {
                    FlightStream s = raw.getStream(wideTicket());
                    assertTrue(s.next()); // in progress: its ring and gRPC's window full, not read on
                    streams.add(s);
                }
                FlightStream over = raw.getStream(wideTicket());
                FlightRuntimeException e = assertThrows(FlightRuntimeException.class, over::next);
                over.close();
                assertEquals(FlightStatusCode.RESOURCE_EXHAUSTED, e.status().code(), e.getMessage());
                assertEquals("call limit reached: 3 calls at once on one connection (ServerLimits.callsPerConnection, serve "
                        + "--max-calls-per-connection)", e.getMessage());
                readEpoch(c);
            } finally {
                LoadAttacks.cancelAndClose(streams, List.of(raw));
            }
        }
        assertWithinBudget();
    }

    @Test
    void sessionsBeyondTheLimitsOfTheServerAndOfAClientAreRefusedNamingThem() throws Exception {
        try (RootAllocator a = new RootAllocator()) {
            List<FlightClient> clients = new ArrayList<>();
            List<FlightStream> streams = new ArrayList<>();
            try {
                for (int i = 0; i < 6; i++) {
                    FlightClient raw = FlightClient.builder(a, server.location()).build();
                    clients.add(raw);
                    FlightStream s = raw.getStream(wideTicket());
                    if (i < 5) {
                        assertTrue(s.next());
                        streams.add(s);
                        continue;
                    }
                    FlightRuntimeException e = assertThrows(FlightRuntimeException.class, s::next);
                    s.close();
                    assertEquals(FlightStatusCode.RESOURCE_EXHAUSTED, e.status().code(), e.getMessage());
                    assertEquals("session limit reached: 5 streams at once from one client (127.0.0.1) "
                            + "(ServerLimits.sessionsPerClient, serve --max-sessions-per-client)", e.getMessage());
                }
                assertEquals(5, server.guard().calls().sessionsInProgress());
            } finally {
                LoadAttacks.cancelAndClose(streams, clients);
            }
        }
        // the server-wide limit, below the per-client one on a server of its own
        server.close();
        server = PrefetchServer.builder(root).limits(LIMITS.withSessions(2)).start();
        try (RootAllocator a = new RootAllocator(); PrefetchClient three = LoadAttacks.bystander(server.port()).open()) {
            FlightClient raw = FlightClient.builder(a, server.location()).build();
            FlightStream one = raw.getStream(wideTicket());
            FlightStream two = raw.getStream(wideTicket());
            try {
                assertTrue(one.next() && two.next()); // both in progress, not read on
                PrefetchServiceException e = assertThrows(PrefetchServiceException.class, () -> three.iterator().hasNext());
                assertEquals(FlightStatusCode.RESOURCE_EXHAUSTED, e.code(), e.getMessage());
                assertTrue(e.getMessage().endsWith("session limit reached: 2 streams at once on this server (ServerLimits.sessions, "
                        + "serve --max-sessions)"), e.getMessage());
            } finally {
                LoadAttacks.cancelAndClose(List.of(one, two), List.of(raw));
            }
        }
        assertWithinBudget();
    }

    @Test
    void idleConnectionsBeyondTheLimitCloseTheOldestUnauthenticatedOnesWhileAClientBesideThemKeepsItsBatches() throws Exception {
        // idle for 8 s here: the sockets are closed for newer ones, then by the authentication deadline (3 s)
        server.close();
        server = PrefetchServer.builder(root).limits(LIMITS.withIdleTimeout(Duration.ofSeconds(8))).start();
        try (PrefetchClient c = LoadAttacks.bystander(server.port()).open()) {
            readEpoch(c);
            long before = server.guard().acceptedTotal();
            List<Socket> idle = new ArrayList<>();
            try {
                for (int i = 0; i < 30; i++) {
                    idle.add(new Socket(InetAddress.ofLiteral("127.0.0.1"), server.port()));
                }
                Await.until(() -> "30 more connections accepted, " + (server.guard().acceptedTotal() - before) + " so far",
                        () -> server.guard().acceptedTotal() - before >= 30);
                assertTrue(server.guard().connections() <= 12, server.guard().connections() + " connections open, limit 12");
                assertEquals(0, server.guard().refusedTotal(), "unauthenticated ones are closed for new ones, none refused");
                readEpoch(c); // its connections authenticated: never the ones closed
                LoadAttacks.awaitClosedByServer(idle);
                readEpoch(c);
            } finally {
                for (Socket s : idle) {
                    s.close();
                }
            }
        }
        assertWithinBudget();
    }

    @Test
    void aSessionAskingForMoreMemoryThanTheBudgetIsRefusedNamingIt() throws Exception {
        try (PrefetchClient fits = PrefetchClient.builder("127.0.0.1", server.port()).dataset("wide").batchSize(1).prefetchDepth(4)
                .path(ReadPath.HOST).timeout(Duration.ofSeconds(30)).open(); PrefetchClient c = LoadAttacks.bystander(server.port()).open()) {
            Iterator<RemoteBatch> it = fits.iterator();
            it.next().close();
            PrefetchServiceException e = assertThrows(PrefetchServiceException.class, () -> PrefetchClient.builder("127.0.0.1",
                    server.port()).dataset("wide").batchSize(4).prefetchDepth(4).path(ReadPath.HOST).open().close());
            assertEquals(FlightStatusCode.RESOURCE_EXHAUSTED, e.code(), e.getMessage());
            assertTrue(e.getMessage().contains("memory budget " + BUDGET + " B"), e.getMessage());
            assertFalseRootPath(e.getMessage());
            readEpoch(c);
            while (it.hasNext()) {
                it.next().close();
            }
        }
        assertWithinBudget();
        assertTrue(peakNative.get() > 0, "the sampler saw the sessions' memory");
    }

    private void assertFalseRootPath(String m) {
        assertTrue(!m.contains(root.toString()), m);
    }
}
