package dev.gdsloader.loader;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.gdsloader.loader.path.ReadPath;
import dev.gdsloader.memory.NativeAllocator;
import java.lang.foreign.ValueLayout;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Iterator;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A loader on the caller's executor ({@link GdsLoader.Builder#ioExecutor}), on real shards: its reads run there, it
 * starts no I/O thread of its own and leaves the executor running at close; an executor that refuses a task (as a pool
 * whose thread cannot start does) fails that batch on the consumer's thread, and the loader still closes with every
 * byte of its ring back.
 */
class GdsLoaderExecutorTest {
    /** Only a hang guard: generous, never a performance assertion. */
    private static final Duration HANG_GUARD = Duration.ofSeconds(30);

    @TempDir
    Path dir;

    private static long ioThreads() {
        return Thread.getAllStackTraces().keySet().stream().filter(t -> t.isAlive() && t.getName().startsWith("gdsloader-io-")).count();
    }

    @Test
    void readsRunOnTheCallersExecutorWhichTheLoaderLeavesRunning() throws Exception {
        TestShards.writeImages(dir, 20, 30);
        TestShards.writeLabels(dir, 50);
        ExecutorService shared = Executors.newFixedThreadPool(2);
        AtomicInteger tasks = new AtomicInteger();
        long before = ioThreads();
        try (NativeAllocator memory = NativeAllocator.root().newChild("GdsLoaderExecutorTest", 1L << 30, 1L << 30)) {
            try (GdsLoader loader = GdsLoader.builder(dir).batchSize(5).path(ReadPath.HOST).prefetchDepth(2).ioThreads(256)
                    .allocator(memory).ioExecutor(r -> {
                        tasks.incrementAndGet();
                        shared.execute(r);
                    }).build()) {
                long records = 0;
                for (Batch b : loader) {
                    try (b) {
                        assertArrayEquals(TestShards.images(b.firstRecord(), b.records()),
                                b.column("images").hostSegment().toArray(ValueLayout.JAVA_BYTE));
                        records += b.records();
                    }
                }
                assertEquals(50, records);
                assertEquals(before, ioThreads(), "no I/O thread of the loader's own, 256 asked for or not");
            }
            assertTrue(tasks.get() > 0, "reads ran on the executor");
            assertFalse(shared.isShutdown(), "the caller's executor is the caller's to shut down");
            assertEquals(0, memory.outstandingBytes(), memory.describeOutstanding());
        } finally {
            shared.shutdown();
        }
    }

    @Test
    void aTaskTheExecutorRefusesFailsItsBatchAndTheLoaderStillClosesClean() throws Exception {
        TestShards.writeImages(dir, 20, 30);
        TestShards.writeLabels(dir, 50);
        ExecutorService shared = Executors.newFixedThreadPool(2);
        AtomicInteger calls = new AtomicInteger();
        try (NativeAllocator memory = NativeAllocator.root().newChild("GdsLoaderExecutorTest", 1L << 30, 1L << 30)) {
            assertTimeoutPreemptively(HANG_GUARD, () -> {
                try (GdsLoader loader = GdsLoader.builder(dir).batchSize(5).path(ReadPath.HOST).prefetchDepth(2).allocator(memory)
                        .ioExecutor(r -> {
                            if (calls.incrementAndGet() == 1) {
                                throw new RejectedExecutionException("no thread (injected)");
                            }
                            shared.execute(r);
                        }).build()) {
                    Iterator<Batch> it = loader.iterator();
                    assertTrue(it.hasNext());
                    IllegalStateException e = assertThrows(IllegalStateException.class, it::next);
                    assertTrue(e.getCause() instanceof RejectedExecutionException, String.valueOf(e.getCause()));
                    assertTrue(e.getMessage().startsWith("batch 0") && e.getMessage().endsWith(": no thread (injected)"),
                            e.getMessage());
                }
            });
            assertEquals(0, memory.outstandingBytes(), memory.describeOutstanding());
        } finally {
            shared.shutdown();
        }
    }
}
