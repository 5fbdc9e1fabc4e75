package dev.gdsloader.loader;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.gdsloader.formats.DType;
import dev.gdsloader.loader.path.PathTaken;
import dev.gdsloader.loader.path.ReadPath;
import java.io.IOException;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * The loader on the host path over real shard files: every batch's column bytes equal the file records,
 * whatever the batch size, shard boundaries, I/O size, thread count, prefetch depth and O_DIRECT setting.
 */
class GdsLoaderHostPathTest {
    /** 40 records; images shards hold 7, 13, 0, 1 and 19 records, labels 20 and 20, weights 11 and 29. */
    static final int N = 40;

    @TempDir
    static Path dir;
    static List<Path> imageShards;
    static List<Path> labelShards;
    static List<Path> weightShards;
    static byte[] allImages;
    static byte[] allLabels;
    static byte[] allWeights;

    @BeforeAll
    static void writeDataset() throws IOException {
        imageShards = TestShards.writeImages(dir, 7, 13, 0, 1, 19);
        labelShards = TestShards.writeLabels(dir, 20, 20);
        weightShards = TestShards.writeWeights(dir, 11, 29);
        allImages = TestShards.fromFiles(imageShards, 0, N);
        allLabels = TestShards.fromFiles(labelShards, 0, N);
        allWeights = TestShards.fromFiles(weightShards, 0, N);
        // the files hold what the generator meant them to hold
        assertArrayEquals(TestShards.images(0, N), allImages);
        assertArrayEquals(TestShards.labels(0, N), allLabels);
        assertArrayEquals(TestShards.weights(0, N), allWeights);
    }

    private static byte[] slice(byte[] all, long firstRecord, int records, int recordBytes) {
        return java.util.Arrays.copyOfRange(all, (int) firstRecord * recordBytes, (int) (firstRecord + records) * recordBytes);
    }

    private static byte[] bytes(MemorySegment s) {
        return s.toArray(ValueLayout.JAVA_BYTE);
    }

    /** An I/O configuration of the loader. */
    record Io(long maxIoBytes, int ioThreads, int prefetchDepth, boolean directIo) {
    }

    static Stream<Arguments> runs() {
        List<Io> ios = List.of(
                new Io(4096, 1, 2, true),       // many 4 KiB chunks, one thread, double buffering
                new Io(4096, 8, 8, false),      // many chunks in parallel, buffered
                new Io(8L << 20, 8, 2, true),   // one chunk per piece
                new Io(8L << 20, 1, 8, false),
                new Io(8192, 3, 3, true));
        List<Arguments> out = new ArrayList<>();
        for (Io io : ios) {
            for (int batch : new int[] {1, 5, 32, N + 24}) {
                for (boolean dropLast : new boolean[] {false, true}) {
                    out.add(Arguments.of(batch, dropLast, io));
                }
            }
        }
        return out.stream();
    }

    @ParameterizedTest(name = "batch {0}, dropLast {1}, {2}")
    @MethodSource("runs")
    void everyBatchHoldsExactlyTheFileRecordsInOrder(int batchSize, boolean dropLast, Io io) throws IOException {
        int expectedBatches = dropLast ? N / batchSize : (N + batchSize - 1) / batchSize;
        try (GdsLoader loader = GdsLoader.builder(dir).batchSize(batchSize).path(ReadPath.HOST).dropLast(dropLast)
                .maxIoBytes(io.maxIoBytes()).ioThreads(io.ioThreads()).prefetchDepth(io.prefetchDepth())
                .directIo(io.directIo()).build()) {
            assertEquals(PathTaken.HOST, loader.pathTaken());
            assertEquals(expectedBatches, loader.batchesPerEpoch());
            long next = 0;
            int index = 0;
            for (Batch b : loader) {
                try (b) {
                    int records = b.records();
                    assertEquals(index, b.index());
                    assertEquals(next, b.firstRecord(), "batches start where the previous one ended");
                    assertEquals(Math.min(batchSize, N - next), records);
                    assertEquals(PathTaken.HOST, b.path());
                    assertTrue(b.readyEvent().isEmpty(), "no CUDA event on the host path");
                    assertEquals(List.of("images", "labels", "weights"), b.columns().stream().map(ColumnView::name).toList());

                    ColumnView images = b.column("images");
                    assertEquals(DType.UINT8, images.dtype());
                    assertArrayEquals(new long[] {records, 28, 28}, images.shape());
                    assertEquals((long) records * TestShards.IMAGE_BYTES, images.bytes());
                    assertFalse(images.onDevice());
                    assertTrue(images.deviceBuffer().isEmpty());
                    assertThrows(IllegalStateException.class, images::devicePointer);
                    assertArrayEquals(slice(allImages, next, records, TestShards.IMAGE_BYTES), bytes(images.hostSegment()),
                            () -> "images of batch " + b.index());

                    ColumnView labels = b.column("labels");
                    assertEquals(DType.UINT8, labels.dtype());
                    assertArrayEquals(new long[] {records}, labels.shape());
                    assertArrayEquals(slice(allLabels, next, records, 1), bytes(labels.hostSegment()),
                            () -> "labels of batch " + b.index());

                    ColumnView weights = b.column("weights");
                    assertEquals(DType.FLOAT32, weights.dtype());
                    assertArrayEquals(new long[] {records, 3}, weights.shape());
                    assertArrayEquals(slice(allWeights, next, records, TestShards.WEIGHT_BYTES), bytes(weights.hostSegment()),
                            () -> "weights of batch " + b.index());

                    assertEquals((long) records * (TestShards.IMAGE_BYTES + 1 + TestShards.WEIGHT_BYTES), b.bytes());
                    next += records;
                    index++;
                }
            }
            assertEquals(expectedBatches, index);
            assertEquals(dropLast ? (long) (N / batchSize) * batchSize : N, next,
                    dropLast ? "the short last batch is dropped" : "the short last batch is delivered");
            LoaderStats s = loader.stats();
            assertEquals(PathTaken.HOST, s.path());
            assertEquals(expectedBatches, s.batches());
            assertEquals(next * (TestShards.IMAGE_BYTES + 1 + TestShards.WEIGHT_BYTES), s.bytes());
            assertTrue(s.storageBytes() >= s.bytes(), "storage bytes include alignment overhead: " + s);
            if (expectedBatches == 0) {
                assertEquals(0, s.storageBytes());
            }
        }
    }

    @Test
    void recordsDecodeToTheirGlobalIndexAndFloatValues() throws IOException {
        try (GdsLoader loader = GdsLoader.builder(dir).batchSize(6).path(ReadPath.HOST).maxIoBytes(4096).build()) {
            for (Batch b : loader) {
                try (b) {
                    ByteBuffer img = b.column("images").hostSegment().asByteBuffer().order(ByteOrder.LITTLE_ENDIAN);
                    ByteBuffer w = b.column("weights").hostSegment().asByteBuffer().order(ByteOrder.LITTLE_ENDIAN);
                    for (int r = 0; r < b.records(); r++) {
                        long global = b.firstRecord() + r;
                        assertEquals(global, img.getInt(r * TestShards.IMAGE_BYTES), "record " + global + " in its place");
                        assertEquals(TestShards.label(global), b.column("labels").hostSegment().get(ValueLayout.JAVA_BYTE, r));
                        for (int k = 0; k < 3; k++) {
                            assertEquals(global + 0.25f * k, w.getFloat(r * TestShards.WEIGHT_BYTES + 4 * k));
                        }
                    }
                }
            }
            assertEquals(7, loader.stats().batches());
        }
    }

    @Test
    void successiveEpochsOfOneLoaderDeliverIdenticalBytes() throws IOException {
        try (GdsLoader loader = GdsLoader.builder(dir).batchSize(5).path(ReadPath.HOST).maxIoBytes(4096)
                .ioThreads(4).prefetchDepth(3).build()) {
            List<List<byte[]>> epochs = new ArrayList<>();
            for (int e = 0; e < 3; e++) {
                List<byte[]> batches = new ArrayList<>();
                for (Batch b : loader) {
                    try (b) {
                        for (ColumnView v : b.columns()) {
                            batches.add(bytes(v.hostSegment()));
                        }
                    }
                }
                assertEquals(8, loader.stats().batches(), "epoch " + e);
                assertEquals((long) N * (TestShards.IMAGE_BYTES + 1 + TestShards.WEIGHT_BYTES), loader.stats().bytes());
                epochs.add(batches);
            }
            for (int e = 1; e < 3; e++) {
                assertEquals(epochs.get(0).size(), epochs.get(e).size());
                for (int i = 0; i < epochs.get(0).size(); i++) {
                    assertArrayEquals(epochs.get(0).get(i), epochs.get(e).get(i), "epoch " + e + ", view " + i);
                }
            }
        }
    }

    @Test
    void statsBeforeTheFirstEpochAreZeroOnTheHostPath() throws IOException {
        try (GdsLoader loader = GdsLoader.builder(dir).batchSize(5).path(ReadPath.HOST).build()) {
            LoaderStats s = loader.stats();
            assertEquals(PathTaken.HOST, s.path());
            assertEquals(0, s.batches());
            assertEquals(0, s.bytes());
        }
    }

    @Test
    void selectedColumnsAreTheOnlyOnesLoaded() throws IOException {
        try (GdsLoader loader = GdsLoader.builder(dir).batchSize(16).path(ReadPath.HOST).columns("weights", "labels").build()) {
            assertEquals(List.of("weights", "labels"), loader.dataset().columns().stream().map(c -> c.name()).toList());
            long next = 0;
            for (Batch b : loader) {
                try (b) {
                    assertEquals(List.of("weights", "labels"), b.columns().stream().map(ColumnView::name).toList());
                    assertThrows(IllegalArgumentException.class, () -> b.column("images"));
                    assertArrayEquals(slice(allLabels, next, b.records(), 1), bytes(b.column("labels").hostSegment()));
                    assertArrayEquals(slice(allWeights, next, b.records(), TestShards.WEIGHT_BYTES),
                            bytes(b.column("weights").hostSegment()));
                    next += b.records();
                }
            }
            assertEquals(N, next);
        }
    }

    @Test
    void aDatasetWithoutRecordsGivesEpochsWithoutBatches(@TempDir Path emptyDir) throws IOException {
        TestShards.writeImages(emptyDir, 0, 0);
        TestShards.writeLabels(emptyDir, 0);
        try (GdsLoader loader = GdsLoader.builder(emptyDir).batchSize(8).path(ReadPath.HOST).build()) {
            assertEquals(0, loader.batchesPerEpoch());
            for (int epoch = 0; epoch < 2; epoch++) {
                assertFalse(loader.iterator().hasNext());
            }
            assertEquals(0, loader.stats().batches());
        }
    }

    @Test
    void aSingleShardFileLoadsAsAOneColumnDataset() throws IOException {
        Path shard = imageShards.get(1); // 13 records, global 7..19
        try (GdsLoader loader = GdsLoader.builder(shard).batchSize(4).path(ReadPath.HOST).build()) {
            assertEquals(1, loader.dataset().columns().size());
            assertEquals("images", loader.dataset().columns().get(0).name());
            long next = 0;
            for (Batch b : loader) {
                try (b) {
                    ColumnView v = b.columns().get(0);
                    assertArrayEquals(TestShards.images(7 + next, b.records()), bytes(v.hostSegment()));
                    next += b.records();
                }
            }
            assertEquals(13, next);
        }
    }
}
