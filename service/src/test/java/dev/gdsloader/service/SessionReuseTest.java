package dev.gdsloader.service;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.gdsloader.loader.path.ReadPath;
import dev.gdsloader.loader.sampler.Shuffle;
import dev.gdsloader.memory.NativeAllocator;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Parked sessions ({@link ParkedSessions}, {@link PrefetchServer.Builder#sessionLinger}) on a real server on loopback:
 * a client's epochs reuse one session and get exactly the batches fresh sessions give; an unclaimed one is freed after
 * its linger; a new session that needs a parked one's memory gets it.
 */
@Timeout(120)
class SessionReuseTest extends ServiceTestBase {

    private PrefetchClient.Builder client(long seed) {
        return PrefetchClient.builder("127.0.0.1", server.port()).dataset("train").batchSize(8).path(ReadPath.HOST)
                .shuffle(Shuffle.GLOBAL, seed).prefetchDepth(2).timeout(Duration.ofSeconds(30));
    }

    /** Three epochs of one client, each checked byte for byte; @return the record order of each. */
    private List<List<Long>> threeEpochs(long seed) {
        List<List<Long>> orders = new ArrayList<>();
        try (PrefetchClient c = client(seed).open()) {
            for (int e = 0; e < 3; e++) {
                List<Long> order = epoch(c, e);
                assertEquals(RECORDS, order.stream().distinct().count(), "every record once in epoch " + e);
                orders.add(order);
            }
        }
        return orders;
    }

    private static void await(BooleanSupplier condition, String what) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (!condition.getAsBoolean()) {
            assertTrue(System.nanoTime() < deadline, what);
            Thread.sleep(5);
        }
    }

    @Test
    void aClientsEpochsReuseOneSessionAndGetTheBatchesFreshSessionsGive() throws Exception {
        long opened = server.sessionsOpened();
        List<List<Long>> reused = threeEpochs(7);
        assertEquals(opened + 1, server.sessionsOpened(), "GetFlightInfo's session served all three epochs");
        assertTrue(!reused.get(0).equals(reused.get(1)), "a global shuffle orders each epoch anew");

        server.close();
        server = PrefetchServer.builder(root).sessionLinger(Duration.ZERO).start();
        List<List<Long>> fresh = threeEpochs(7);
        assertEquals(4, server.sessionsOpened(), "without a linger: GetFlightInfo and each epoch open a session");
        assertEquals(0, server.parkedSessions());
        assertEquals(fresh, reused, "a parked session's epochs (started ahead) are the epochs fresh sessions send");
    }

    @Test
    void anUnclaimedSessionIsFreedAfterItsLinger() throws Exception {
        server.close();
        server = PrefetchServer.builder(root).sessionLinger(Duration.ofMillis(1500)).start();
        try (PrefetchClient c = client(1).open()) {
            epoch(c, 0);
        }
        await(() -> server.parkedSessions() == 1, "the finished epoch's session is parked for the next");
        assertTrue(server.allocator().outstandingBytes() > 0, "a parked session keeps its ring");
        await(() -> server.parkedSessions() == 0 && server.allocator().outstandingBytes() == 0,
                "freed after its linger: " + server.allocator().describeOutstanding());
        awaitSessions(0);
    }

    @Test
    void aNewSessionThatNeedsAParkedSessionsMemoryGetsIt() throws Exception {
        try (PrefetchClient c = client(1).open()) {
            epoch(c, 0);
        }
        await(() -> server.parkedSessions() == 1, "parked");
        long ring = server.allocator().outstandingBytes();
        server.close();
        try (NativeAllocator one = NativeAllocator.root().newChild("one ring", ring, NativeAllocator.UNLIMITED)) {
            server = PrefetchServer.builder(root).allocator(one).start();
            try (PrefetchClient a = client(1).open()) {
                epoch(a, 0);
            }
            await(() -> server.parkedSessions() == 1, "a's session parked, holding the whole budget");
            assertEquals(ring, one.outstandingBytes());
            try (PrefetchClient b = client(2).open()) { // another seed: another request, which a's session cannot serve
                assertEquals(RECORDS, epoch(b, 0).size());
            }
            server.close();
            assertEquals(0, one.outstandingBytes());
        }
    }

    @Test
    void whenAsManyAreParkedAsTheServerHasSessionsTheOneParkedLongestGoes() throws Exception {
        server.close();
        server = PrefetchServer.builder(root).limits(ServerLimits.defaults().withSessions(1)).start(); // parks 1 at most
        try (PrefetchClient a = client(1).open()) {
            epoch(a, 0);
        }
        await(() -> server.parkedSessions() == 1, "a's session parked for its epoch 1");
        long opened = server.sessionsOpened();
        try (PrefetchClient b = client(2).open()) {
            // b's GetFlightInfo session takes the one place (a's goes) and b's stream takes it over
            assertEquals(RECORDS, epoch(b, 0).size());
        }
        assertEquals(opened + 1, server.sessionsOpened(), "b's stream reused its GetFlightInfo's session");
        await(() -> server.parkedSessions() == 1, "b's session parked for its epoch 1");
    }

    @Test
    void aNegativeLingerIsRefused() {
        var e = assertThrows(IllegalArgumentException.class, () -> PrefetchServer.builder(root).sessionLinger(Duration.ofMillis(-1)));
        assertTrue(e.getMessage().contains("session linger must be >= 0"), e.getMessage());
    }
}
