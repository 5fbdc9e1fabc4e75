package dev.gdsloader.service;

import dev.gdsloader.loader.path.ReadPath;
import dev.gdsloader.service.client.PrefetchClient;
import dev.gdsloader.service.client.PrefetchServiceException;
import dev.gdsloader.service.client.RemoteBatch;
import dev.gdsloader.service.server.ServerLimits;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.arrow.flight.FlightClient;
import org.apache.arrow.flight.FlightDescriptor;
import org.apache.arrow.flight.FlightRuntimeException;
import org.apache.arrow.flight.FlightStatusCode;
import org.apache.arrow.flight.FlightStream;
import org.apache.arrow.flight.Location;
import org.apache.arrow.memory.RootAllocator;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import static dev.gdsloader.service.LoadAttacks.readEpoch;
import static dev.gdsloader.service.LoadAttacks.wideTicket;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;


/**
 * The server's resident set stays bounded under each exhaustion attack: a {@link ServerChild} in a child JVM with
 * {@link #BUDGET} of memory budget (and small connection, session, call and message limits), its VmRSS read from
 * {@code /proc/PID/status} before each attack (after one normal epoch read warmed it), every 5 ms during it, and after
 * it. The attacks, one after another on the same child: several streams opened and never read (unread-reply flood),
 * requests beyond the per-connection call limit (many in flight), {@code 30} idle TCP connections against a limit of
 * {@code 12}, messages of 8 MiB against a limit of 64 KiB, and a session asking for more than the budget. In each,
 * the peak and the final RSS are at most RSS before + {@link #BUDGET} + {@link #MARGIN}, the refused get a named error,
 * and a client beside the attacker gets every batch of an epoch within 1 s.
 *
 * <p>The margin: the child runs with {@code -Xms128m -Xmx128m -XX:+AlwaysPreTouch} (the whole heap is resident before
 * the first measurement, so heap growth is not counted) and {@code -XX:MaxDirectMemorySize=64m} (NIO direct buffers,
 * and Netty's pooled arenas, which count against it, are capped at 64 MiB). {@link #MARGIN} = 128 MiB covers those
 * 64 MiB of direct memory plus 64 MiB for what the JVM grows on first running the attack's code paths (JIT code cache,
 * metaspace, the stacks of new Netty and session threads, glibc malloc arenas). Linux only (skipped without
 * {@code /proc/self/status}).
 */
@Timeout(120)
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class ServerRssTest {
    /** The child's memory budget (ServerLimits.memoryBudget), bytes. */
    static final long BUDGET = 16L << 20;
    /** Allowed growth beyond the budget, bytes: see the class Javadoc. */
    static final long MARGIN = 128L << 20;
    private static final int CONNECTIONS = 12;
    private static final int MAX_MESSAGE = 64 << 10;

    @TempDir
    static Path root;
    private Process child;
    private int port;

    @BeforeAll
    void start() throws Exception {
        org.junit.jupiter.api.Assumptions.assumeTrue(Files.isReadable(Path.of("/proc/self/status")), "no /proc: not Linux");
        LoadAttacks.writeDatasets(root);
        child = ChildJvm.command(ServerChild.class,
                List.of("-Xms128m", "-Xmx128m", "-XX:+AlwaysPreTouch", "-XX:MaxDirectMemorySize=64m"),
                "--memory-budget=" + BUDGET, "--max-connections=" + CONNECTIONS, "--max-sessions=6", "--max-sessions-per-client=5",
                "--max-calls-per-connection=3", "--idle-timeout-ms=8000", "--max-message-bytes=" + MAX_MESSAGE, root.toString())
                .redirectError(root.resolve("server.err").toFile()).start();
        BufferedReader out = new BufferedReader(new InputStreamReader(child.getInputStream(), StandardCharsets.UTF_8));
        String line = out.readLine();
        assertTrue(line != null && line.startsWith("port "), "child said " + line + "; stderr: " + stderr());
        port = Integer.parseInt(line.substring(5));
    }

    @AfterAll
    void stop() throws Exception {
        if (child != null) {
            child.getOutputStream().close();
            if (!child.waitFor(20, TimeUnit.SECONDS)) {
                child.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
            }
        }
    }

    private String stderr() throws IOException {
        return Files.readString(root.resolve("server.err"));
    }

    /** @return the child's resident set size (VmRSS), bytes */
    private long rss() throws IOException {
        for (String l : Files.readAllLines(Path.of("/proc/" + child.pid() + "/status"))) {
            if (l.startsWith("VmRSS:")) {
                return Long.parseLong(l.substring(6).trim().split("\\s+", -1)[0]) * 1024;
            }
        }
        throw new IOException("/proc/" + child.pid() + "/status: no VmRSS line");
    }

    /**
     * Polls the child's RSS until it has not grown over {@value #STEADY_SAMPLES} samples in a row (a server that wrote
     * as far as its rings and windows let it), within {@link Await#HANG}.
     */
    private void awaitRssSteady() {
        long[] top = {0};
        int[] flat = {0};
        Await.until(() -> "the server's RSS steady (" + top[0] + " B at most so far)", () -> {
            long now;
            try {
                now = rss();
            } catch (IOException e) {
                throw new AssertionError("the server child's RSS cannot be read", e);
            }
            flat[0] = now > top[0] ? 0 : flat[0] + 1;
            top[0] = Math.max(top[0], now);
            return flat[0] >= STEADY_SAMPLES;
        });
    }

    /** Samples of an RSS that did not grow: {@link #awaitRssSteady}. */
    private static final int STEADY_SAMPLES = 300;

    private interface Attack {
        /** Runs the attack against the child while {@code bystander} (open, warmed) reads beside it. */
        void run(PrefetchClient bystander) throws Exception;
    }

    /**
     * Warms a bystander with one epoch, reads RSS, runs {@code attack} with RSS sampled every 5 ms, reads RSS after;
     * fails if the peak or the final RSS exceed before + budget + margin.
     */
    private void withinBudget(String name, Attack attack) throws Exception {
        assertTrue(child.isAlive(), "the server child died; stderr: " + stderr());
        try (PrefetchClient c = LoadAttacks.bystander(port).open()) {
            readEpoch(c); // warm
            long before = rss();
            AtomicLong peak = new AtomicLong(before);
            Thread sampler = Thread.ofPlatform().daemon().start(() -> {
                while (!Thread.currentThread().isInterrupted()) {
                    try {
                        peak.accumulateAndGet(rss(), Math::max);
                    } catch (IOException e) {
                        return;
                    }
                    java.util.concurrent.locks.LockSupport.parkNanos(5_000_000); // a sample every 5 ms: a sampler, not a wait
                }
            });
            try {
                attack.run(c);
            } finally {
                sampler.interrupt();
                sampler.join(5_000);
            }
            long after = rss();
            long bound = before + BUDGET + MARGIN;
            System.out.printf("ServerRssTest %s: RSS before %d MiB, peak %d MiB, after %d MiB, bound %d MiB%n", name, before >> 20,
                    peak.get() >> 20, after >> 20, bound >> 20);
            assertTrue(peak.get() <= bound, name + ": RSS peak " + peak.get() + " B > before " + before + " B + budget " + BUDGET
                    + " B + margin " + MARGIN + " B");
            assertTrue(after <= bound, name + ": RSS after " + after + " B > before " + before + " B + budget " + BUDGET
                    + " B + margin " + MARGIN + " B");
        }
        assertTrue(child.isAlive(), "the server child died; stderr: " + stderr());
    }

    private FlightClient raw(RootAllocator a) {
        return FlightClient.builder(a, Location.forGrpcInsecure("127.0.0.1", port)).build();
    }

    @Test
    void streamsOpenedAndNeverReadHoldTheRssWithinTheBudget() throws Exception {
        withinBudget("unread-reply flood", c -> {
            try (RootAllocator a = new RootAllocator()) {
                List<FlightClient> clients = List.of(raw(a), raw(a));
                List<FlightStream> streams = new ArrayList<>();
                try {
                    for (FlightClient raw : clients) {
                        for (int i = 0; i < 2; i++) {
                            FlightStream s = raw.getStream(wideTicket());
                            assertTrue(s.next()); // in progress: its ring and gRPC's window full, not read on
                            streams.add(s);
                        }
                    }
                    awaitRssSteady(); // the server writes on as far as it may
                    readEpoch(c);
                    awaitRssSteady();
                } finally {
                    LoadAttacks.cancelAndClose(streams, clients);
                }
            }
        });
    }

    @Test
    void requestsBeyondTheCallLimitHoldTheRssWithinTheBudget() throws Exception {
        withinBudget("many requests in flight", c -> {
            try (RootAllocator a = new RootAllocator()) {
                FlightClient raw = raw(a);
                List<FlightStream> streams = new ArrayList<>();
                try {
                    for (int i = 0; i < 3; i++) {
                        FlightStream s = raw.getStream(wideTicket());
                        assertTrue(s.next());
                        streams.add(s);
                    }
                    for (int i = 0; i < 20; i++) {
                        FlightStream over = raw.getStream(wideTicket());
                        FlightRuntimeException e = assertThrows(FlightRuntimeException.class, over::next);
                        over.close();
                        assertEquals(FlightStatusCode.RESOURCE_EXHAUSTED, e.status().code(), e.getMessage());
                        assertTrue(e.getMessage().startsWith("call limit reached: 3 calls at once on one connection"), e.getMessage());
                    }
                    readEpoch(c);
                } finally {
                    LoadAttacks.cancelAndClose(streams, List.of(raw));
                }
            }
        });
    }

    @Test
    void idleConnectionsBeyondTheLimitHoldTheRssWithinTheBudget() throws Exception {
        withinBudget("many idle connections", c -> {
            List<Socket> idle = new ArrayList<>();
            try {
                for (int i = 0; i < 30; i++) {
                    idle.add(new Socket(InetAddress.ofLiteral("127.0.0.1"), port));
                }
                // never authenticated: the oldest closed for newer ones beyond the limit, the rest after the auth timeout
                LoadAttacks.awaitClosedByServer(idle);
                readEpoch(c);
            } finally {
                for (Socket s : idle) {
                    s.close();
                }
            }
        });
    }

    @Test
    void messagesOverTheLimitHoldTheRssWithinTheBudget() throws Exception {
        withinBudget("huge messages", c -> {
            try (RootAllocator a = new RootAllocator()) {
                FlightClient raw = raw(a);
                try {
                    for (int i = 0; i < 8; i++) {
                        FlightRuntimeException e = assertThrows(FlightRuntimeException.class,
                                () -> raw.getInfo(FlightDescriptor.command(new byte[8 << 20])));
                        assertEquals(FlightStatusCode.RESOURCE_EXHAUSTED, e.status().code(), e.getMessage());
                        assertTrue(e.getMessage().contains(Integer.toString(MAX_MESSAGE)), e.getMessage());
                    }
                    readEpoch(c);
                } finally {
                    raw.close();
                }
            }
            // a raw HTTP/2 frame header announcing 16 MiB - 1, 64 KiB of it sent: refused, never buffered whole
            try (Socket s = new Socket(InetAddress.ofLiteral("127.0.0.1"), port)) {
                OutputStream o = s.getOutputStream();
                o.write("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n".getBytes(StandardCharsets.US_ASCII));
                o.write(new byte[] {0, 0, 0, 4, 0, 0, 0, 0, 0}); // empty SETTINGS
                o.write(new byte[] {(byte) 0xff, (byte) 0xff, (byte) 0xff, 0, 0, 0, 0, 0, 1}); // DATA, 16 MiB - 1, stream 1
                try {
                    o.write(new byte[64 << 10]);
                    o.flush();
                } catch (IOException closed) {
                    // the server closed it on the frame header (over SETTINGS_MAX_FRAME_SIZE): refused all the same
                }
                readEpoch(c);
            }
        });
    }

    @Test
    void aSessionAskingBeyondTheBudgetIsRefusedAndTheRssStaysWithinIt() throws Exception {
        withinBudget("memory beyond the budget", c -> {
            try (PrefetchClient fits = PrefetchClient.builder("127.0.0.1", port).dataset("wide").batchSize(1).prefetchDepth(4)
                    .path(ReadPath.HOST).timeout(Duration.ofSeconds(30)).open()) {
                Iterator<RemoteBatch> it = fits.iterator();
                it.next().close();
                for (int i = 0; i < 5; i++) {
                    PrefetchServiceException e = assertThrows(PrefetchServiceException.class, () -> PrefetchClient.builder("127.0.0.1", port)
                            .dataset("wide").batchSize(LoadAttacks.WIDE_RECORDS).prefetchDepth(4).path(ReadPath.HOST).open().close());
                    assertEquals(FlightStatusCode.RESOURCE_EXHAUSTED, e.code(), e.getMessage());
                    assertTrue(e.getMessage().contains("memory budget " + BUDGET + " B"), e.getMessage());
                }
                readEpoch(c);
                while (it.hasNext()) {
                    it.next().close();
                }
            }
        });
    }
}
