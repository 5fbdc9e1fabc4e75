package dev.gdsloader.service.server;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.gdsloader.service.Await;
import dev.gdsloader.service.LoadAttacks;
import dev.gdsloader.service.LogWarnings;
import dev.gdsloader.service.client.PrefetchClient;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.arrow.flight.FlightClient;
import org.apache.arrow.flight.FlightRuntimeException;
import org.apache.arrow.flight.FlightStatusCode;
import org.apache.arrow.flight.FlightStream;
import org.apache.arrow.flight.Ticket;
import org.apache.arrow.memory.RootAllocator;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * A failure while a session opens or starts releases everything it took (issue 21, finding 4), on a real server on
 * loopback: a thread of the I/O pool that cannot start (the pool's thread factory fails as the JVM does without
 * threads left), a memory budget refusal, and bad requests (above a ceiling, an unknown column). After each the server's
 * allocator has 0 bytes outstanding, no session logged an unclean close, and the next request is served.
 */
@Timeout(180)
class SessionOpenFailureTest {
    private static final long BUDGET = 12L << 20;

    @TempDir
    Path root;
    private PrefetchServer server;
    private final AtomicBoolean failNextThread = new AtomicBoolean();
    private final AtomicInteger threadsMade = new AtomicInteger();
    private LogWarnings warnings;

    @BeforeEach
    void start() throws Exception {
        LoadAttacks.writeDatasets(root);
        warnings = LogWarnings.on(Session.class.getName());
        server = PrefetchServer.builder(root)
                .limits(ServerLimits.defaults().withIoThreads(2).withMemoryBudget(BUDGET).withMaxBatchBytes(4L << 20))
                .ioThreadFactory(r -> {
                    if (failNextThread.getAndSet(false)) {
                        throw new OutOfMemoryError("unable to create native thread: possibly out of memory or process/resource "
                                + "limits reached (injected)");
                    }
                    return Thread.ofPlatform().daemon().name(SessionCeilings.THREAD_PREFIX + "t" + threadsMade.getAndIncrement())
                            .unstarted(r);
                })
                .start();
    }

    @AfterEach
    void stop() {
        warnings.close();
        server.close();
    }

    private FlightRuntimeException failure(String options) throws Exception {
        Ticket t = new Ticket(("{\"version\":4,\"dataset\":\"" + (options.contains("wide") ? "wide" : "train") + "\",\"options\":"
                + options.replace("wide", "") + "}").getBytes(StandardCharsets.UTF_8));
        try (RootAllocator a = new RootAllocator()) {
            FlightClient c = FlightClient.builder(a, server.location()).build();
            FlightStream s = c.getStream(t);
            try {
                return assertThrows(FlightRuntimeException.class, () -> {
                    while (s.next()) {
                        // read on to the failure
                    }
                });
            } finally {
                s.close();
                c.close();
            }
        }
    }

    /** Nothing outstanding in the server's allocator, nothing logged, and the next request is served in full. */
    private void nothingTakenAndTheNextRequestServed() throws Exception {
        Await.until(() -> server.allocator().outstandingBytes() + " bytes outstanding, 0 expected: "
                + server.allocator().describeOutstanding(), () -> server.allocator().outstandingBytes() == 0);
        try (PrefetchClient c = LoadAttacks.bystander(server.port()).open()) {
            LoadAttacks.readEpoch(c);
        }
        server.freeParkedSessions();
        Await.until(() -> server.allocator().outstandingBytes() + " bytes outstanding after the next request, 0 expected",
                () -> server.allocator().outstandingBytes() == 0);
        assertEquals(List.of(), warnings.messages());
    }

    @Test
    void aThreadThatCannotStartFailsTheSessionAndReleasesEverything() throws Exception {
        failNextThread.set(true);
        FlightRuntimeException e = failure("{\"batchSize\":8,\"prefetchDepth\":2,\"path\":\"HOST\"}");
        assertEquals(FlightStatusCode.INTERNAL, e.status().code(), e.getMessage());
        assertTrue(e.getMessage().contains("unable to create native thread"), e.getMessage());
        nothingTakenAndTheNextRequestServed();
    }

    @Test
    void aBudgetRefusalReleasesEverything() throws Exception {
        FlightRuntimeException e = failure("{\"batchSize\":3,\"prefetchDepth\":8,\"path\":\"HOST\"}wide"); // 8 x 3 MiB > 12 MiB
        assertEquals(FlightStatusCode.RESOURCE_EXHAUSTED, e.status().code(), e.getMessage());
        nothingTakenAndTheNextRequestServed();
    }

    @Test
    void requestsAboveACeilingOrOtherwiseBadAreRefusedNamingItAndReleaseEverything() throws Exception {
        FlightRuntimeException depth = failure("{\"batchSize\":8,\"prefetchDepth\":17,\"path\":\"HOST\"}");
        assertEquals(FlightStatusCode.INVALID_ARGUMENT, depth.status().code(), depth.getMessage());
        assertTrue(depth.getMessage().contains("option prefetchDepth 17 is above this server's ceiling of 16 slots "
                + "(ServerLimits.maxPrefetchDepth, serve --max-prefetch-depth)"), depth.getMessage());
        FlightRuntimeException bytes = failure("{\"batchSize\":5,\"prefetchDepth\":1,\"path\":\"HOST\"}wide"); // 5 MiB > 4 MiB
        assertEquals(FlightStatusCode.INVALID_ARGUMENT, bytes.status().code(), bytes.getMessage());
        assertTrue(bytes.getMessage().contains("a batch of 5 records of dataset 'wide' is 5242880 bytes, above this server's "
                + "ceiling of 4194304 bytes (ServerLimits.maxBatchBytes, serve --max-batch-bytes)"), bytes.getMessage());
        FlightRuntimeException column = failure("{\"batchSize\":8,\"columns\":[\"nope\"],\"path\":\"HOST\"}");
        assertEquals(FlightStatusCode.INVALID_ARGUMENT, column.status().code(), column.getMessage());
        nothingTakenAndTheNextRequestServed();
    }
}
