package dev.gdsloader.bench;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import dev.gdsloader.formats.npy.NpyShard;
import dev.gdsloader.loader.dataset.Dataset;
import dev.gdsloader.loader.sampler.EpochOrder;
import java.io.IOException;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** {@link BatchReads}: the file ranges of each batch, over real {@code .npy} shards of 10 records each. */
class BatchReadsTest {
    private static final int RECORD = 5000;

    @TempDir
    Path dir;

    @Test
    void sequentialBatchesSplitAtShardBoundariesAndKeepOrDropTheShortLastBatch() throws IOException {
        List<Path> shards = SyntheticDataset.generate(dir, 3L * 10 * RECORD, 3, RECORD, 11);
        long data = NpyShard.open(shards.get(0)).dataOffset();
        Dataset d = Dataset.open(dir);
        List<BatchReads> keep = BatchReads.sequential(d, 4, false);
        assertEquals(8, keep.size());
        assertEquals(7 * 4 + 2, keep.get(7).firstRecord() + keep.get(7).records());
        assertEquals(7, BatchReads.sequential(d, 4, true).size());
        BatchReads b2 = keep.get(2); // records 8..11: shard 0 (8, 9), shard 1 (0, 1)
        assertEquals(2, b2.index());
        assertEquals(List.of(new BatchReads.Range(0, data + 8L * RECORD, data + 10L * RECORD),
                new BatchReads.Range(1, data, data + 2L * RECORD)), b2.columns().get(0).ranges());
        assertEquals(4L * RECORD, b2.bytes());
        assertThrows(IllegalArgumentException.class, () -> BatchReads.sequential(d, 0, false));
    }

    @Test
    void aShuffledOrderGivesOneRangePerRunOfConsecutiveRecordsOfOneShard() throws IOException {
        List<Path> shards = SyntheticDataset.generate(dir, 3L * 10 * RECORD, 3, RECORD, 11);
        long data = NpyShard.open(shards.get(0)).dataOffset();
        Dataset d = Dataset.open(dir);
        // 9 and 10 are consecutive records but in two shards; 20 comes back to 7 after a jump
        EpochOrder order = new EpochOrder(0, new long[] {5, 6, 20, 7, 9, 10}, 6);
        List<BatchReads> reads = BatchReads.epoch(d, order, 6, false);
        assertEquals(1, reads.size());
        assertEquals(List.of(new BatchReads.Range(0, data + 5L * RECORD, data + 7L * RECORD),
                new BatchReads.Range(2, data, data + RECORD),
                new BatchReads.Range(0, data + 7L * RECORD, data + 8L * RECORD),
                new BatchReads.Range(0, data + 9L * RECORD, data + 10L * RECORD),
                new BatchReads.Range(1, data, data + RECORD)), reads.get(0).columns().get(0).ranges());
        assertEquals(5, reads.get(0).firstRecord());
    }
}
