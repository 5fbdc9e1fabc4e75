package dev.gdsloader.loader;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.gdsloader.cuda.Cuda;
import dev.gdsloader.loader.path.PathTaken;
import dev.gdsloader.loader.path.ReadPath;
import dev.gdsloader.loader.positional.PositionalReadEngine;
import dev.gdsloader.loader.sampler.Shuffle;
import java.io.IOException;
import java.lang.foreign.ValueLayout;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.List;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A new engine is one class plus one services line: {@link PositionalReadEngine} lives only in the test sources,
 * registered by its line in {@code src/test/resources/META-INF/services}, and {@code AUTO} takes it where its
 * provider serves (a directory holding its marker, on a machine without a GPU: the GPU paths come first), every batch
 * byte-exact against the shard files.
 */
class TestOnlyEngineTest {
    private static final int[] SHARDS = {37, 50, 13};
    private static final int N = 100;

    @TempDir
    Path dir;

    @Test
    void autoTakesTheTestOnlyEngineAndItsBatchesAreTheFilesBytes() throws IOException {
        Assumptions.assumeFalse(Cuda.availability().available(), "a GPU is here: AUTO prefers the GPU paths to it");
        List<Path> images = TestShards.writeImages(dir, SHARDS);
        List<Path> labels = TestShards.writeLabels(dir, SHARDS);
        Files.createFile(dir.resolve(PositionalReadEngine.Provider.MARKER));
        byte[] allImages = TestShards.fromFiles(images, 0, N);
        byte[] allLabels = TestShards.fromFiles(labels, 0, N);
        int opened = PositionalReadEngine.OPENED.get();
        boolean[] seen = new boolean[N];
        try (GdsLoader loader = GdsLoader.builder(dir).path(ReadPath.AUTO).batchSize(16).shuffle(Shuffle.GLOBAL, 11)
                .maxIoBytes(4096).ioThreads(3).prefetchDepth(3).build()) {
            assertEquals(opened + 1, PositionalReadEngine.OPENED.get(), "AUTO opened the test-only engine");
            assertEquals(PathTaken.HOST, loader.pathTaken());
            assertTrue(loader.pathReason().startsWith("HOST: no GPU path: " + Cuda.availability().reason()),
                    "the reason AUTO gives on a machine without a GPU, why the first path declined: " + loader.pathReason());
            for (Batch b : loader) {
                try (b) {
                    assertEquals(PathTaken.HOST, b.path());
                    byte[] im = b.column("images").hostSegment().toArray(ValueLayout.JAVA_BYTE);
                    byte[] lb = b.column("labels").hostSegment().toArray(ValueLayout.JAVA_BYTE);
                    for (int i = 0; i < b.records(); i++) {
                        int r = Math.toIntExact(b.recordIndex(i));
                        seen[r] = true;
                        int size = TestShards.IMAGE_BYTES;
                        assertArrayEquals(Arrays.copyOfRange(allImages, r * size, (r + 1) * size),
                                Arrays.copyOfRange(im, i * size, (i + 1) * size), "image of record " + r);
                        assertEquals(allLabels[r], lb[i], "label of record " + r);
                    }
                }
            }
        }
        for (int r = 0; r < N; r++) {
            assertTrue(seen[r], "record " + r + " was in a batch");
        }
    }

    @Test
    void withoutItsMarkerTheHostEngineServesAsBefore() throws IOException {
        TestShards.writeImages(dir, SHARDS);
        int opened = PositionalReadEngine.OPENED.get();
        try (GdsLoader loader = GdsLoader.builder(dir).path(ReadPath.HOST).batchSize(16).build()) {
            assertEquals(opened, PositionalReadEngine.OPENED.get(), "the test-only engine declines");
            assertTrue(loader.pathReason().startsWith("HOST: requested"), loader.pathReason());
        }
    }
}
