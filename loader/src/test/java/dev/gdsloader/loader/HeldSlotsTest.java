package dev.gdsloader.loader;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.gdsloader.loader.path.ReadPath;
import java.lang.foreign.ValueLayout;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A consumer that holds more batches than the prefetch depth (issue 21, finding 9): it waited forever in
 * {@code next()}. Now it waits up to the I/O timeout for a release, then gets {@link AllSlotsHeldException}.
 */
class HeldSlotsTest {
    /** Only a hang guard: generous, never a performance assertion. */
    private static final Duration HANG_GUARD = Duration.ofSeconds(60);

    @TempDir
    Path dir;

    private GdsLoader loader(int depth, long ioTimeoutMillis) throws Exception {
        TestShards.writeImages(dir, 40);
        TestShards.writeLabels(dir, 40);
        return GdsLoader.builder(dir).batchSize(4).path(ReadPath.HOST).prefetchDepth(depth).ioThreads(2)
                .ioTimeoutMillis(ioTimeoutMillis).build();
    }

    /** Takes {@code n} batches and holds them, unreleased. */
    private static List<Batch> take(Iterator<Batch> it, int n) {
        List<Batch> held = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            held.add(it.next());
        }
        return held;
    }

    @Test
    void aConsumerHoldingEverySlotGetsAnExceptionNamingDepthAndHeldBatchesAfterTheIoTimeout() throws Exception {
        assertTimeoutPreemptively(HANG_GUARD, () -> {
            try (GdsLoader loader = loader(3, 200)) {
                Iterator<Batch> it = loader.iterator();
                List<Batch> held = take(it, 3);
                long t0 = System.nanoTime();
                AllSlotsHeldException e = assertThrows(AllSlotsHeldException.class, it::next);
                long waited = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - t0);
                assertTrue(waited >= 200, "it waits the I/O timeout for a release first: " + waited + " ms");
                assertEquals(3, e.prefetchDepth());
                assertEquals(3, e.heldBatches());
                assertEquals(200, e.waitedMillis());
                assertTrue(e.getMessage().contains("holds 3 unreleased batch(es) and the prefetch depth is 3")
                        && e.getMessage().contains("200 ms"), e.getMessage());
                // the epoch goes on once the consumer lets go of a batch
                held.remove(0).close();
                try (Batch b = it.next()) {
                    assertEquals(3, b.index());
                    assertArrayEquals(TestShards.images(12, 4), b.column("images").hostSegment().toArray(ValueLayout.JAVA_BYTE));
                }
                held.forEach(Batch::close);
            }
        });
    }

    @Test
    void aReleaseFromAnotherThreadDuringTheWaitLetsTheNextBatchCome() throws Exception {
        assertTimeoutPreemptively(HANG_GUARD, () -> {
            try (GdsLoader loader = loader(2, 30_000)) {
                Iterator<Batch> it = loader.iterator();
                Batch first = it.next();
                Batch second = it.next();
                Thread consumer = Thread.currentThread();
                CompletableFuture<Void> releaser = CompletableFuture.runAsync(() -> {
                    // once the consumer waits in next() (parked with a timeout), let go of its first batch
                    while (consumer.getState() != Thread.State.TIMED_WAITING) {
                        LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(1)); // a poll interval
                    }
                    first.close();
                });
                try (Batch third = it.next()) {
                    assertEquals(2, third.index());
                    assertArrayEquals(TestShards.images(8, 4), third.column("images").hostSegment().toArray(ValueLayout.JAVA_BYTE));
                }
                releaser.get(30, TimeUnit.SECONDS);
                second.close();
            }
        });
    }

    @Test
    void aConsumerHoldingEverySlotAtTheEpochsEndSeesTheEndAtOnce() throws Exception {
        assertTimeoutPreemptively(HANG_GUARD, () -> {
            // 10 batches of 4 records, 10 slots; an I/O timeout far beyond the hang guard: the end must not wait for it
            try (GdsLoader loader = loader(10, 600_000)) {
                Iterator<Batch> it = loader.iterator();
                List<Batch> held = take(it, 10);
                assertFalse(it.hasNext());
                held.forEach(Batch::close);
            }
        });
    }
}
