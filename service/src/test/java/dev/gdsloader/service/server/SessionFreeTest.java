package dev.gdsloader.service.server;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.gdsloader.loader.LoaderOptions;
import dev.gdsloader.memory.NativeAllocator;
import dev.gdsloader.service.Await;
import dev.gdsloader.service.LogWarnings;
import dev.gdsloader.service.ServiceShards;
import dev.gdsloader.service.protocol.Delivery;
import dev.gdsloader.service.protocol.Request;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.logging.LogRecord;
import org.apache.arrow.memory.ArrowBuf;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;



/**
 * A session freed by its last holder while gRPC still holds a message's small buffers for a moment (they are released a
 * little after the slot buffers, in Netty's order): the session waits for them instead of logging a leak, and still
 * names a buffer that is never released. A real session over real shards; the late release comes from another thread.
 */
class SessionFreeTest {
    @TempDir
    Path dir;

    /** The sessions' I/O pool and ceilings, as a server has them (its threads end when idle). */
    private static final SessionCeilings CEILINGS = new SessionCeilings(ServerLimits.defaults(), null);

    private Session open(BufferAllocator arrow, NativeAllocator memory, ExecutorService cleanup) throws Exception {
        ServiceShards.write(dir.resolve("train"), 10, 10);
        Request r = new Request("train", LoaderOptions.defaults().withBatchSize(4), Delivery.HOST, 0, null);
        return Session.open("t", r, DatasetRoot.of(dir, false), memory, arrow, CEILINGS, cleanup, s -> { });
    }

    @Test
    void aSmallBufferReleasedJustAfterTheLastHolderIsWaitedForNotLoggedAsALeak() throws Exception {
        LogWarnings w = LogWarnings.on(Session.class.getName());
        ExecutorService cleanup = Executors.newSingleThreadExecutor();
        try (BufferAllocator arrow = new RootAllocator();
             NativeAllocator memory = NativeAllocator.root().newChild("SessionFreeTest", 1L << 30, 1L << 30)) {
            Session s = open(arrow, memory, cleanup);
            ArrowBuf record = s.arrow().buffer(34); // as a message's _record and _padding, still held by gRPC
            CountDownLatch unheld = new CountDownLatch(1);
            Thread late = Thread.ofPlatform().start(() -> {
                try {
                    unheld.await(); // released just after the last holder, while the session is being freed
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
                record.close();
            });
            s.unhold(); // the last holder: the session is freed on the cleanup executor
            unheld.countDown();
            assertTrue(s.awaitFreed(Await.HANG.toMillis()), "freed");
            late.join();
            assertEquals(List.of(), w.records().stream().map(LogRecord::getMessage).toList());
            assertEquals(0, arrow.getAllocatedMemory());
        } finally {
            w.close();
            cleanup.shutdown();
        }
    }

    @Test
    void aBufferNeverReleasedIsStillNamedAfterTheWait() throws Exception {
        LogWarnings w = LogWarnings.on(Session.class.getName());
        ExecutorService cleanup = Executors.newSingleThreadExecutor();
        BufferAllocator arrow = new RootAllocator();
        try (NativeAllocator memory = NativeAllocator.root().newChild("SessionFreeTest", 1L << 30, 1L << 30)) {
            Session s = open(arrow, memory, cleanup);
            s.arrow().buffer(34); // never released
            s.unhold();
            assertFalse(s.awaitFreed(0), "waits for the buffer before it frees the session");
            assertTrue(s.awaitFreed(Await.HANG.toMillis()), "freed");
            assertEquals(1, w.records().size(), "one warning naming the leak");
            assertTrue(w.records().get(0).getMessage().contains("did not close cleanly"), w.records().get(0).getMessage());
        } finally {
            w.close();
            cleanup.shutdown();
            // the leaked buffer stays counted in the root: its close names it
            org.junit.jupiter.api.Assertions.assertThrows(IllegalStateException.class, arrow::close);
        }
    }

    @Test
    void aCleanupThreadThatCannotStartStillFreesTheSessionOnce() throws Exception {
        java.util.concurrent.Executor noThread = r -> {
            throw new OutOfMemoryError("unable to create native thread: possibly out of memory or process/resource limits "
                    + "reached (injected)");
        };
        try (LogWarnings w = LogWarnings.on(Session.class.getName()); BufferAllocator arrow = new RootAllocator();
             NativeAllocator memory = NativeAllocator.root().newChild("SessionFreeTest", 1L << 30, 1L << 30)) {
            ServiceShards.write(dir.resolve("train"), 10, 10);
            Request r = new Request("train", LoaderOptions.defaults().withBatchSize(4), Delivery.HOST, 0, null);
            Session s = Session.open("t", r, DatasetRoot.of(dir, false), memory, arrow, CEILINGS, noThread, x -> { });
            assertTrue(memory.outstandingBytes() > 0, "the session's ring is held");
            s.unhold(); // the last holder: the executor cannot take the free, the releasing thread does it
            assertTrue(s.awaitFreed(0), "freed before unhold returned");
            assertEquals(0, memory.outstandingBytes(), memory.describeOutstanding());
            assertEquals(1, w.records().size(), "one line saying where it was freed");
            assertTrue(w.records().get(0).getMessage().contains("freed on the releasing thread"), w.records().get(0).getMessage());
        }
    }
}
