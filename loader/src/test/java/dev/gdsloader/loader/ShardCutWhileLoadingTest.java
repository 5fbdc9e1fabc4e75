package dev.gdsloader.loader;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.gdsloader.formats.npy.NpyShard;
import dev.gdsloader.loader.path.ReadPath;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.lang.foreign.ValueLayout;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.nio.channels.FileChannel;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Duration;
import java.util.Iterator;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * A shard cut ({@code truncate}) by another thread while the loader reads it, epoch after epoch, as a user's
 * {@code latency DIR --no-direct --epochs 1000 --batch-size 1} and a {@code truncate -s} met it (issue 21, finding 8):
 * the consumer gets an {@link UncheckedIOException} naming the file and the offset, never an {@link InternalError} or
 * a hang, and the I/O pool stops cleanly: no thread re-spawned in a loop, none left after {@code close()}.
 */
class ShardCutWhileLoadingTest {
    /** Only a hang guard: generous, never a performance assertion. */
    private static final Duration HANG_GUARD = Duration.ofSeconds(60);
    private static final int IO_THREADS = 4;
    private static final int MAX_EPOCHS = 1000;
    /** Batches delivered before the cut: enough for the JIT to compile the read path (its faults differ from the interpreter's). */
    private static final int BEFORE_CUT = 30_000;
    /** Failed batches the consumer goes on past before it stops. */
    private static final int FAILURES = 200;

    @TempDir
    Path dir;

    @ParameterizedTest(name = "directIo {0}")
    @ValueSource(booleans = {false, true})
    void aShardCutUnderARunningLoaderFailsNamingFileAndOffsetAndThePoolStops(boolean directIo) throws Exception {
        List<Path> images = TestShards.writeImages(dir, 300, 300);
        TestShards.writeLabels(dir, 600);
        Path victim = images.get(1);
        long cutAt = NpyShard.open(victim).dataOffset() + 10L * TestShards.IMAGE_BYTES; // keeps records 300..309
        ThreadMXBean threads = ManagementFactory.getThreadMXBean();
        assertTimeoutPreemptively(HANG_GUARD, () -> {
            CountDownLatch running = new CountDownLatch(BEFORE_CUT);
            CompletableFuture<Void> cut = CompletableFuture.runAsync(() -> {
                try {
                    running.await(); // reads of both shards in flight, the copy code compiled
                    try (FileChannel ch = FileChannel.open(victim, StandardOpenOption.WRITE)) {
                        ch.truncate(cutAt);
                    }
                } catch (IOException e) {
                    throw new UncheckedIOException(e);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    throw new IllegalStateException(e);
                }
            });
            long startedBefore = threads.getTotalStartedThreadCount();
            UncheckedIOException failure = null;
            int failures = 0;
            int epochs = 0;
            try (GdsLoader loader = GdsLoader.builder(dir).batchSize(1).path(ReadPath.HOST).prefetchDepth(8)
                    .ioThreads(IO_THREADS).directIo(directIo).build()) {
                while (failures < FAILURES && epochs < MAX_EPOCHS) {
                    epochs++;
                    Iterator<Batch> it = loader.iterator();
                    while (it.hasNext() && failures < FAILURES) {
                        try (Batch b = it.next()) {
                            if (running.getCount() > 0) { // before the cut: the bytes are right
                                assertArrayEquals(TestShards.images(b.firstRecord(), 1),
                                        b.column("images").hostSegment().toArray(ValueLayout.JAVA_BYTE));
                            }
                            running.countDown();
                        } catch (UncheckedIOException e) { // a batch of the cut part: the epoch goes on past it
                            failure = failure == null ? e : failure;
                            failures++;
                            assertTrue(e.getMessage().contains(victim.toString()) && e.getMessage().contains("offset "),
                                    e.getMessage());
                        }
                    }
                }
            }
            cut.get(10, TimeUnit.SECONDS);
            assertNotNull(failure, "no failure in " + MAX_EPOCHS + " epochs after the shard was cut");
            String m = failure.getMessage();
            assertTrue(m.contains(victim.toString()) && m.contains("offset "), m);
            for (Throwable t = failure; t != null; t = t.getCause()) {
                assertTrue(!(t instanceof Error), "an Error in the cause chain: " + t);
            }
            // one reader thread per epoch and the pool's threads: a pool that re-spawned dying threads started thousands
            long started = threads.getTotalStartedThreadCount() - startedBefore;
            assertTrue(started <= IO_THREADS + epochs + 16, started + " threads started for " + epochs + " epoch(s)");
            assertEquals(0, liveIoThreadsAfterClose(), "I/O threads left after close()");
        });
    }

    /** Polls, with a deadline, until the closed loader's I/O threads are gone; returns how many are left. */
    private static long liveIoThreadsAfterClose() throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
        long live;
        while ((live = Thread.getAllStackTraces().keySet().stream()
                .filter(t -> t.getName().startsWith("gdsloader-io-") && t.isAlive()).count()) > 0
                && System.nanoTime() < deadline) {
            java.util.concurrent.locks.LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(5)); // a poll interval
        }
        return live;
    }
}
