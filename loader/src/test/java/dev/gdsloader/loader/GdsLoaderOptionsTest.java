package dev.gdsloader.loader;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeFalse;

import dev.gdsloader.cuda.Cuda;
import dev.gdsloader.loader.path.PathTaken;
import dev.gdsloader.loader.path.ReadPath;
import java.io.IOException;
import java.nio.file.Path;
import java.util.List;
import java.util.function.UnaryOperator;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Option validation and path selection of {@link GdsLoader}, on real shard files. */
class GdsLoaderOptionsTest {
    @TempDir
    Path dir;

    @BeforeEach
    void writeDataset() throws IOException {
        TestShards.writeImages(dir, 9, 3);
        TestShards.writeLabels(dir, 12);
    }

    private IllegalArgumentException invalid(UnaryOperator<GdsLoader.Builder> settings) {
        return assertThrows(IllegalArgumentException.class,
                () -> settings.apply(GdsLoader.builder(dir).batchSize(4).path(ReadPath.HOST)).build().close());
    }

    private static void assumeNoGpu() {
        assumeFalse(Cuda.availability().available(), "CUDA is available here; these tests are for machines without a GPU");
    }

    @Test
    void aSmallDatasetIsReadThroughThePageCacheUnlessODirectIsAsked() throws IOException {
        try (GdsLoader loader = GdsLoader.builder(dir).batchSize(4).path(ReadPath.HOST).build()) {
            assertTrue(loader.pathReason().contains("buffered reads: the dataset (0.00 GB) fits in half of host memory"),
                    loader.pathReason());
        }
        try (GdsLoader loader = GdsLoader.builder(dir).batchSize(4).path(ReadPath.HOST).directIo(true).build()) {
            assertTrue(loader.pathReason().endsWith("; O_DIRECT reads as requested"), loader.pathReason());
        }
    }

    @Test
    void batchSizeZeroIsRejectedNamingTheOption() {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> GdsLoader.builder(dir).batchSize(0));
        assertTrue(e.getMessage().contains("batchSize"), e.getMessage());
        assertTrue(e.getMessage().contains("0"), e.getMessage());
    }

    @Test
    void aMissingBatchSizeTakesTheDocumentedDefault() throws Exception {
        try (GdsLoader loader = GdsLoader.builder(dir).path(ReadPath.HOST).build()) { // issue 21: a default, 256
            assertEquals(GdsLoader.DEFAULT_BATCH_SIZE, loader.options().batchSize());
            assertEquals(256, GdsLoader.DEFAULT_BATCH_SIZE);
        }
    }

    @Test
    void prefetchDepthZeroIsRejectedNamingTheOption() {
        IllegalArgumentException e = invalid(b -> b.prefetchDepth(0));
        assertTrue(e.getMessage().contains("prefetchDepth"), e.getMessage());
    }

    @Test
    void maxIoBytesNotAMultipleOf4096IsRejectedNamingTheOption() {
        IllegalArgumentException e = invalid(b -> b.maxIoBytes(1000));
        assertTrue(e.getMessage().contains("maxIoBytes"), e.getMessage());
        assertTrue(e.getMessage().contains("1000"), e.getMessage());
        assertTrue(invalid(b -> b.maxIoBytes(0)).getMessage().contains("maxIoBytes"));
        assertTrue(invalid(b -> b.maxIoBytes(-4096)).getMessage().contains("maxIoBytes"));
    }

    @Test
    void ioThreadsZeroAndNegativeDeviceAreRejectedNamingTheOption() {
        assertTrue(invalid(b -> b.ioThreads(0)).getMessage().contains("ioThreads"));
        assertTrue(invalid(b -> b.device(-1)).getMessage().contains("device"));
    }

    @Test
    void unknownColumnIsRejectedNamingTheColumnsThatExist() {
        IllegalArgumentException e = invalid(b -> b.columns("pixels"));
        assertTrue(e.getMessage().contains("pixels"), e.getMessage());
        assertTrue(e.getMessage().contains("images") && e.getMessage().contains("labels"), e.getMessage());
    }

    @Test
    void builderDefaultsAreTheDocumentedOnes() throws IOException {
        try (GdsLoader loader = GdsLoader.builder(dir).batchSize(4).path(ReadPath.HOST).build()) {
            LoaderOptions o = loader.options();
            assertEquals(4, o.batchSize());
            assertEquals(0, o.device());
            assertEquals(4, o.prefetchDepth());
            assertEquals(4, o.ioThreads());
            assertEquals(8L << 20, o.maxIoBytes());
            assertFalse(o.sampler().dropLast());
            assertFalse(o.directIo()); // DirectIoPolicy: a dataset of a few KB is read through the page cache
            assertEquals(List.of(), o.columns());
            assertEquals(3, loader.batchesPerEpoch());
            assertTrue(loader.pathReason().startsWith("HOST"), loader.pathReason());
        }
    }

    @Test
    void bounceWithoutAGpuFailsWithTheReason() {
        assumeNoGpu();
        IllegalStateException e = assertThrows(IllegalStateException.class,
                () -> GdsLoader.builder(dir).batchSize(4).path(ReadPath.BOUNCE).build().close());
        assertTrue(e.getMessage().contains("BOUNCE"), e.getMessage());
        assertTrue(e.getMessage().contains(Cuda.availability().reason()), e.getMessage());
    }

    @Test
    void gdsWithoutAGpuFailsWithTheReason() {
        assumeNoGpu();
        IllegalStateException e = assertThrows(IllegalStateException.class,
                () -> GdsLoader.builder(dir).batchSize(4).path(ReadPath.GDS).build().close());
        assertTrue(e.getMessage().contains("GDS"), e.getMessage());
        assertTrue(e.getMessage().contains(Cuda.availability().reason()), e.getMessage());
    }

    @Test
    void autoWithoutAGpuTakesTheHostPathAndSaysWhy() throws IOException {
        assumeNoGpu();
        try (GdsLoader loader = GdsLoader.builder(dir).batchSize(5).build()) {
            assertEquals(ReadPath.AUTO, loader.options().path());
            assertEquals(PathTaken.HOST, loader.pathTaken());
            assertTrue(loader.pathReason().startsWith("HOST"), loader.pathReason());
            assertTrue(loader.pathReason().contains("no GPU"), loader.pathReason());
            assertTrue(loader.pathReason().contains(Cuda.availability().reason()), loader.pathReason());
            long records = 0;
            for (Batch b : loader) {
                try (b) {
                    assertEquals(PathTaken.HOST, b.path());
                    records += b.records();
                }
            }
            assertEquals(12, records);
        }
    }

    @Test
    void missingDatasetDirectoryFailsNamingIt() {
        Path missing = dir.resolve("absent");
        IOException e = assertThrows(IOException.class,
                () -> GdsLoader.builder(missing).batchSize(4).path(ReadPath.HOST).build().close());
        assertTrue(e.getMessage().contains("absent"), e.getMessage());
    }
}
