package dev.gdsloader.loader.plan;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.gdsloader.formats.npy.NpyShard;
import dev.gdsloader.loader.TestShards;
import dev.gdsloader.loader.dataset.Dataset;
import java.io.IOException;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** {@link ReadPlanner}: batch plans over real shard layouts. */
class ReadPlannerTest {
    private static final int IMG = TestShards.IMAGE_BYTES;

    @TempDir
    static Path dir;
    static Dataset dataset;
    static long imageData; // data offset of every images shard (same header size)
    static long labelData;

    @BeforeAll
    static void writeDataset() throws IOException {
        List<Path> images = TestShards.writeImages(dir, 7, 13, 0, 1, 19);
        List<Path> labels = TestShards.writeLabels(dir, 20, 20);
        dataset = Dataset.open(dir);
        imageData = NpyShard.open(images.get(0)).dataOffset();
        labelData = NpyShard.open(labels.get(0)).dataOffset();
        for (Path p : images) {
            assertEquals(imageData, NpyShard.open(p).dataOffset());
        }
    }

    private static Piece piece(int shard, long dataOffset, long firstLocal, long records, long recordBytes, long viewOffset) {
        return new Piece(shard, dataOffset + firstLocal * recordBytes, dataOffset + (firstLocal + records) * recordBytes, viewOffset);
    }

    @Test
    void batchesAreConsecutiveAndTheLastShortOneIsKeptOrDropped() {
        List<BatchPlan> keep = BatchPlan.sequential(dataset, 16, false);
        assertEquals(3, keep.size());
        assertEquals(List.of(0L, 16L, 32L), keep.stream().map(BatchPlan::firstRecord).toList());
        assertEquals(List.of(16, 16, 8), keep.stream().map(BatchPlan::records).toList());
        assertEquals(List.of(0L, 1L, 2L), keep.stream().map(BatchPlan::index).toList());
        List<BatchPlan> drop = BatchPlan.sequential(dataset, 16, true);
        assertEquals(2, drop.size());
        assertEquals(0, BatchPlan.sequential(dataset, 41, true).size());
        assertEquals(1, BatchPlan.sequential(dataset, 41, false).size());
        assertEquals(40, BatchPlan.sequential(dataset, 1, true).size());
    }

    @Test
    void aBatchSizeNearTheIntLimitIsOneBatchNotNone() {
        // entries + batchSize - 1 in int arithmetic overflowed to 0 batches (found by a new user: empty epochs)
        assertEquals(1, ReadPlanner.batches(999, Integer.MAX_VALUE, false));
        assertEquals(1, ReadPlanner.batches(999, Integer.MAX_VALUE - 997, false));
        assertEquals(0, ReadPlanner.batches(999, Integer.MAX_VALUE, true));
        assertEquals(1, BatchPlan.sequential(dataset, Integer.MAX_VALUE, false).size());
    }

    @Test
    void batchSizeZeroIsRejected() {
        assertThrows(IllegalArgumentException.class, () -> BatchPlan.sequential(dataset, 0, false));
    }

    @Test
    void aBatchAcrossAShardBoundaryHasOnePiecePerShardWithConsecutiveViewOffsets() {
        BatchPlan b = BatchPlan.sequential(dataset, 5, false).get(1); // records 5..9: shard 0 (5, 6), shard 1 (0..2)
        assertEquals(5, b.firstRecord());
        ColumnPlan images = b.columns().get(0);
        assertEquals(0, images.column());
        assertEquals(List.of(piece(0, imageData, 5, 2, IMG, 0), piece(1, imageData, 0, 3, IMG, 2L * IMG)), images.pieces());
        assertEquals(5L * IMG, images.bytes());
        ColumnPlan labels = b.columns().get(1);
        assertEquals(List.of(piece(0, labelData, 5, 5, 1, 0)), labels.pieces());
        assertEquals(5, labels.bytes());
        assertEquals(5L * IMG + 5, b.bytes());
    }

    @Test
    void emptyShardsContributeNoPiece() {
        BatchPlan b = BatchPlan.plan(dataset, range(19, 5), 0, 5); // 19 in shard 1, 20 in shard 3, 21..23 in shard 4
        assertEquals(List.of(piece(1, imageData, 12, 1, IMG, 0), piece(3, imageData, 0, 1, IMG, IMG),
                piece(4, imageData, 0, 3, IMG, 2L * IMG)), b.columns().get(0).pieces());
        // labels change shard at record 20
        assertEquals(List.of(piece(0, labelData, 19, 1, 1, 0), piece(1, labelData, 0, 4, 1, 1)), b.columns().get(1).pieces());
    }

    @Test
    void piecesOfEveryBatchTileTheColumnViewExactly() {
        for (int batch : new int[] {1, 3, 5, 7, 32, 40}) {
            for (BatchPlan p : BatchPlan.sequential(dataset, batch, false)) {
                for (ColumnPlan c : p.columns()) {
                    long view = 0;
                    for (Piece piece : c.pieces()) {
                        assertEquals(view, piece.viewOffset(), "batch size " + batch + ", batch " + p.index());
                        assertTrue(piece.length() > 0);
                        view += piece.length();
                    }
                    assertEquals(c.bytes(), view);
                    assertEquals(p.records() * dataset.columns().get(c.column()).recordBytes(), c.bytes());
                }
            }
        }
    }

    @Test
    void headPadAndStagingBytesFollowThe4KiBCoverOfEachPiece() {
        BatchPlan b = BatchPlan.sequential(dataset, 5, false).get(1);
        ColumnPlan images = b.columns().get(0);
        Piece first = images.pieces().get(0);
        assertEquals(first.fileStart() % 4096, images.headPad());
        long staging = 0;
        for (Piece p : images.pieces()) {
            assertEquals(Alignment.up(p.fileEnd()) - Alignment.down(p.fileStart()), p.alignedLength());
            staging += p.alignedLength();
        }
        assertEquals(staging, images.stagingBytes());
        assertEquals(8192, new Piece(0, 100, 5000, 0).alignedLength());
        assertEquals(4096, new Piece(0, 4096, 8192, 0).alignedLength());
        assertEquals(0, new ColumnPlan(0, List.of(), 0).headPad());
    }

    /** An order holding records [first, first + count), so batch 0 of it is exactly those records. */
    private static dev.gdsloader.loader.sampler.EpochOrder range(long first, int count) {
        long[] r = new long[count];
        for (int i = 0; i < count; i++) {
            r[i] = first + i;
        }
        return new dev.gdsloader.loader.sampler.EpochOrder(0, r, count);
    }

    @Test
    void aBatchPlannedInPartsOnSeveralThreadsEqualsOnePlannedAtOnce() throws Exception {
        long[] shardRecords = dataset.columns().get(0).shards().stream()
                .mapToLong(dev.gdsloader.formats.RecordLayout::recordCount).toArray();
        dev.gdsloader.loader.sampler.Sampler sampler = new dev.gdsloader.loader.sampler.Sampler(
                dev.gdsloader.loader.sampler.SamplerOptions.sequential()
                        .withShuffle(dev.gdsloader.loader.sampler.Shuffle.GLOBAL, 7).withBlockRecords(16), shardRecords, 16);
        dev.gdsloader.loader.sampler.EpochOrder order = sampler.order(3);
        int[] capacity = {16, 16};
        for (long b = 0; b < ReadPlanner.batches(order.size(), 16, false); b++) {
            SlotPlan whole = new SlotPlan(capacity);
            ReadPlanner.planInto(dataset, order, b, 16, whole);
            SlotPlan parts = new SlotPlan(capacity);
            ReadPlanner.begin(order, b, 16, parts);
            int n = parts.records();
            Thread[] threads = new Thread[3];
            for (int k = 0; k < threads.length; k++) {
                int lo = n * k / threads.length;
                int hi = n * (k + 1) / threads.length;
                threads[k] = Thread.ofPlatform().start(() -> ReadPlanner.fillOrder(parts, lo, hi));
            }
            for (Thread t : threads) {
                t.join();
            }
            ReadPlanner.planPieces(dataset, parts);
            assertEquals(BatchPlan.of(whole), BatchPlan.of(parts), "batch " + b);
        }
    }
}
