package dev.gdsloader.loader;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.gdsloader.loader.path.ReadPath;
import dev.gdsloader.memory.IllegalReferenceCountException;
import java.io.IOException;
import java.lang.foreign.ValueLayout;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.function.Executable;
import org.junit.jupiter.api.io.TempDir;

/** A released batch fails loudly, on the host path (no GPU): its views, its accessors, a second release. */
class BatchLifetimeTest {
    @TempDir
    Path dir;

    private GdsLoader loader(int depth) throws IOException {
        TestShards.writeImages(dir, 8);
        return GdsLoader.builder(dir).batchSize(2).path(ReadPath.HOST).prefetchDepth(depth).build();
    }

    @Test
    void readingTheViewOfAClosedBatchThrowsNamingTheBatch() throws IOException {
        try (GdsLoader loader = loader(1)) {
            Iterator<Batch> it = loader.iterator();
            Batch first = it.next();
            ColumnView images = first.column("images");
            assertEquals(TestShards.images(0, 2)[4], images.hostSegment().get(ValueLayout.JAVA_BYTE, 4));
            first.close();
            IllegalReferenceCountException e = assertThrows(IllegalReferenceCountException.class, images::hostSegment);
            assertTrue(e.getMessage().startsWith("batch 0 of epoch 0") && e.getMessage().contains("was already released"),
                    e.getMessage());
            // with one slot, the next batch lands where the first was: the old view must not read it
            Batch second = it.next();
            assertArrayEquals(TestShards.images(2, 2), second.column("images").hostSegment().toArray(ValueLayout.JAVA_BYTE));
            for (Executable read : List.<Executable>of(images::hostSegment, images::bytes, images::shape, images::name,
                    images::dtype, images::onDevice, images::deviceBuffer, images::deviceOffset, images::devicePointer)) {
                assertThrows(IllegalReferenceCountException.class, read);
            }
            assertTrue(images.toString().endsWith("(released)"), images.toString());
            second.close();
        }
    }

    @Test
    void everyAccessorOfAReleasedBatchThatReachesItsSlotThrows() throws IOException {
        try (GdsLoader loader = loader(2)) {
            Batch b = loader.iterator().next();
            b.close();
            for (Executable read : List.<Executable>of(b::columns, () -> b.column("images"), b::bytes, b::readyEvent,
                    () -> b.awaitOn(null))) {
                assertThrows(IllegalReferenceCountException.class, read);
            }
            assertEquals(0, b.refCount(), "the count still answers");
            assertTrue(b.describe().startsWith("batch 0 of epoch 0"), "and so does what the batch is");
            assertEquals(0, b.index());
            assertEquals(1, b.recordIndex(1));
        }
    }

    @Test
    void closingABatchTwiceThrows() throws IOException {
        try (GdsLoader loader = loader(2)) {
            Iterator<Batch> it = loader.iterator();
            Batch b = it.next();
            b.close();
            IllegalReferenceCountException e = assertThrows(IllegalReferenceCountException.class, b::close);
            assertTrue(e.getMessage().startsWith("batch 0 of epoch 0 (records 0, 1)") && e.getMessage().contains("released more often than retained"),
                    e.getMessage());
            assertThrows(IllegalReferenceCountException.class, b::retain, "no retain after the last release");
            int rest = 0;
            while (it.hasNext()) {
                it.next().close();
                rest++;
            }
            assertEquals(3, rest, "the double close did not give the slot back twice");
        }
    }

    @Test
    void retainsAndReleasesFromManyThreadsGiveTheSlotBackExactlyOnce() throws Exception {
        int threads = 4;
        int perThread = 10_000;
        try (GdsLoader loader = loader(1)) {
            Iterator<Batch> it = loader.iterator();
            Batch b = it.next();
            ExecutorService pool = Executors.newFixedThreadPool(threads);
            CountDownLatch start = new CountDownLatch(1);
            List<Future<?>> done = new ArrayList<>();
            for (int t = 0; t < threads; t++) {
                done.add(pool.submit(() -> {
                    start.await();
                    for (int i = 0; i < perThread; i++) {
                        b.retain();
                        b.close();
                    }
                    b.retain();
                    return null;
                }));
            }
            start.countDown();
            for (Future<?> f : done) {
                f.get();
            }
            pool.shutdown();
            assertEquals(1 + threads, b.refCount(), "no update was lost");
            for (int i = 0; i <= threads; i++) {
                b.close();
            }
            assertThrows(IllegalReferenceCountException.class, b::close);
            int rest = 0;
            while (it.hasNext()) {
                it.next().close();
                rest++;
            }
            assertEquals(3, rest);
        }
    }
}
