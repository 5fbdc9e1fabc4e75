package dev.gdsloader.loader;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertDoesNotThrow;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.gdsloader.formats.npy.NpyShard;
import dev.gdsloader.loader.path.ReadPath;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.lang.foreign.ValueLayout;
import java.nio.channels.FileChannel;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/** The loader when things go wrong: a shard shrinks under it, the consumer closes it mid-epoch. */
class GdsLoaderFailureTest {
    /** Only a hang guard: generous, never a performance assertion. */
    private static final Duration HANG_GUARD = Duration.ofSeconds(30);

    @TempDir
    Path dir;

    private static void truncate(Path file, long size) throws IOException {
        try (FileChannel ch = FileChannel.open(file, StandardOpenOption.WRITE)) {
            ch.truncate(size);
        }
    }

    @ParameterizedTest(name = "directIo {0}")
    @ValueSource(booleans = {true, false})
    void shardTruncatedAfterBuildFailsOnTheConsumerThreadNamingFileAndOffset(boolean directIo) throws IOException {
        List<Path> images = TestShards.writeImages(dir, 20, 30);
        TestShards.writeLabels(dir, 50);
        Path victim = images.get(1); // records 20..49
        long dataOffset = NpyShard.open(victim).dataOffset();
        assertTimeoutPreemptively(HANG_GUARD, () -> {
            try (GdsLoader loader = GdsLoader.builder(dir).batchSize(5).path(ReadPath.HOST).prefetchDepth(2)
                    .maxIoBytes(4096).directIo(directIo).build()) {
                // keep the first 6 records of the second shard (global 20..25): batch 5 (records 25..29) is short
                truncate(victim, dataOffset + 6L * TestShards.IMAGE_BYTES);
                List<Long> delivered = new ArrayList<>();
                UncheckedIOException e = assertThrows(UncheckedIOException.class, () -> {
                    for (Batch b : loader) {
                        try (b) {
                            assertArrayEquals(TestShards.images(b.firstRecord(), b.records()),
                                    b.column("images").hostSegment().toArray(ValueLayout.JAVA_BYTE));
                            delivered.add(b.index());
                        }
                    }
                });
                assertEquals(List.of(0L, 1L, 2L, 3L, 4L), delivered, "batches before the damage are delivered intact");
                String m = e.getMessage();
                assertTrue(m.contains(victim.toString()), m);
                assertTrue(m.contains("offset "), m);
                assertTrue(m.contains("batch 5"), m);
                assertTrue(m.contains("records 25, 26, ... 29"), m);
                assertTrue(e.getCause().getMessage().contains(victim.toString()), e.getCause().getMessage());
            }
        });
    }

    @Test
    void consumerThatKeepsGoingAfterAShortReadSeesTheEpochEnd() throws IOException {
        List<Path> images = TestShards.writeImages(dir, 10, 30);
        TestShards.writeLabels(dir, 40);
        Path victim = images.get(1);
        long dataOffset = NpyShard.open(victim).dataOffset();
        assertTimeoutPreemptively(HANG_GUARD, () -> {
            // 8 slots: more than the 6 batches that fail
            try (GdsLoader loader = GdsLoader.builder(dir).batchSize(5).path(ReadPath.HOST).prefetchDepth(8).build()) {
                truncate(victim, dataOffset + 3L * TestShards.IMAGE_BYTES); // records 13.. gone: batches 2..7 fail
                Iterator<Batch> it = loader.iterator();
                int ok = 0;
                int failed = 0;
                while (it.hasNext()) {
                    try (Batch b = it.next()) {
                        assertEquals(ok, b.index(), "the intact batches come first");
                        ok++;
                    } catch (UncheckedIOException e) {
                        failed++;
                        assertTrue(e.getMessage().contains(victim.toString()), e.getMessage());
                    }
                }
                assertEquals(2, ok);
                assertEquals(6, failed);
            }
        });
    }

    @Test
    void consumerThatKeepsGoingAfterMoreFailuresThanSlotsSeesTheEpochEnd() throws IOException {
        List<Path> images = TestShards.writeImages(dir, 10, 30);
        TestShards.writeLabels(dir, 40);
        Path victim = images.get(1);
        long dataOffset = NpyShard.open(victim).dataOffset();
        assertTimeoutPreemptively(HANG_GUARD, () -> {
            try (GdsLoader loader = GdsLoader.builder(dir).batchSize(5).path(ReadPath.HOST).prefetchDepth(2).build()) {
                truncate(victim, dataOffset + 3L * TestShards.IMAGE_BYTES); // batches 2..7 fail: more than 2 slots
                Iterator<Batch> it = loader.iterator();
                int failed = 0;
                while (it.hasNext()) {
                    try (Batch b = it.next()) {
                        assertTrue(b.records() > 0);
                    } catch (UncheckedIOException e) {
                        failed++;
                    }
                }
                assertEquals(6, failed);
            }
        });
    }

    @Test
    void closeDuringAnEpochReturnsAndASecondCloseIsHarmless() throws IOException {
        TestShards.writeImages(dir, 100, 100);
        TestShards.writeLabels(dir, 200);
        assertTimeoutPreemptively(HANG_GUARD, () -> {
            GdsLoader loader = GdsLoader.builder(dir).batchSize(1).path(ReadPath.HOST).prefetchDepth(3)
                    .ioThreads(2).maxIoBytes(4096).build();
            Iterator<Batch> it = loader.iterator();
            Batch held = it.next(); // one batch of 200, held (not released) across close
            assertEquals(0, held.index());
            assertArrayEquals(TestShards.images(0, 1), held.column("images").hostSegment().toArray(ValueLayout.JAVA_BYTE));
            loader.close();
            assertDoesNotThrow(loader::close);
            assertThrows(IllegalStateException.class, loader::iterator);
            // the held batch's memory was freed with the loader: touching it fails cleanly instead of reading freed memory
            IllegalStateException closed = assertThrows(IllegalStateException.class,
                    () -> held.column("images").hostSegment().get(ValueLayout.JAVA_BYTE, 0));
            assertEquals("column 'images' of batch 0 of epoch 0 (records 0) is no longer readable: its loader was closed "
                    + "while the batch was held, and its memory was freed with it", closed.getMessage());
            assertDoesNotThrow(held::close);
        });
    }

    @Test
    void closeBeforeAnyEpochAndIteratorAfterCloseIsRefused() throws IOException {
        TestShards.writeImages(dir, 10);
        TestShards.writeLabels(dir, 10);
        GdsLoader loader = GdsLoader.builder(dir).batchSize(3).path(ReadPath.HOST).build();
        loader.close();
        loader.close();
        IllegalStateException e = assertThrows(IllegalStateException.class, loader::iterator);
        assertTrue(e.getMessage().contains("closed"), e.getMessage());
    }

    @Test
    void aNewEpochStopsTheOneTheConsumerLeftAndTheOldIteratorEnds() throws IOException {
        TestShards.writeImages(dir, 10);
        TestShards.writeLabels(dir, 10);
        assertTimeoutPreemptively(HANG_GUARD, () -> {
            try (GdsLoader loader = GdsLoader.builder(dir).batchSize(3).path(ReadPath.HOST).build()) {
                Iterator<Batch> first = loader.iterator();
                first.next().close();
                Iterator<Batch> second = loader.iterator(); // the consumer left the first epoch
                assertTrue(!first.hasNext(), "the left epoch's iterator ends instead of hanging");
                assertThrows(java.util.NoSuchElementException.class, first::next);
                int n = 0;
                while (second.hasNext()) {
                    try (Batch b = second.next()) {
                        assertEquals(1, b.epoch());
                        n++;
                    }
                }
                assertEquals(4, n);
            }
        });
    }

}
