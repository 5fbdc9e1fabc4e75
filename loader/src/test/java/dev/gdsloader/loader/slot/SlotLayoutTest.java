package dev.gdsloader.loader.slot;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.gdsloader.loader.TestShards;
import dev.gdsloader.loader.dataset.Dataset;
import dev.gdsloader.loader.plan.Alignment;
import dev.gdsloader.loader.plan.BatchPlan;
import dev.gdsloader.loader.plan.ColumnPlan;
import dev.gdsloader.loader.plan.Piece;
import dev.gdsloader.loader.plan.ReadPlanner;
import dev.gdsloader.loader.spi.SlotLayout;
import java.io.IOException;
import java.nio.file.Path;
import java.util.List;
import dev.gdsloader.loader.sampler.Sampler;
import dev.gdsloader.loader.sampler.SamplerOptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** {@link SlotLayout}: region sizes from batch plans. */
class SlotLayoutTest {
    @TempDir
    Path dir;

    @Test
    void regionsAreSizedForAFullBatchPlusHeadRoomAndEightKiBOfCoverPerPiece() throws IOException {
        TestShards.writeImages(dir, 10);
        TestShards.writeLabels(dir, 10);
        Dataset d = Dataset.open(dir); // columns sorted by name: images (784-byte records), labels (1 byte)
        SlotLayout l = SlotLayout.forBatch(d.columns(), 8, c -> c == 0 ? 3 : 1);
        // images target: up(8 x 784 + 4096) = 12288; labels target: up(8 + 4096) = 8192
        assertArrayEquals(new long[] {0, 12288}, l.targetOffsets());
        assertEquals(12288 + 8192, l.targetBytes());
        // images staging: up(6272 + 3 x 8192) = 32768; labels staging: up(8 + 8192) = 12288
        assertArrayEquals(new long[] {0, 32768}, l.stagingOffsets());
        assertEquals(32768 + 12288, l.stagingBytes());
        assertTrue(Alignment.isAligned(l.targetBytes()) && Alignment.isAligned(l.stagingBytes()));
    }

    @Test
    void layoutOfARealDatasetHoldsEveryBatchAndKeepsRegionsAligned() throws IOException {
        TestShards.writeImages(dir, 7, 13, 0, 1, 19);
        TestShards.writeLabels(dir, 20, 20);
        TestShards.writeWeights(dir, 11, 29);
        Dataset d = Dataset.open(dir);
        for (int batch : new int[] {1, 5, 32, 64}) {
            List<BatchPlan> plans = ReadPlanner.sequential(d, batch, false);
            Sampler sampler = new Sampler(SamplerOptions.sequential(), new long[] {7, 13, 0, 1, 19}, batch);
            SlotLayout l = SlotLayout.forBatch(d.columns(), batch,
                    c -> sampler.maxPiecesPerBatch(batch, d.columns().get(c).shards().size()));
            long[] to = l.targetOffsets();
            long[] so = l.stagingOffsets();
            for (int c = 0; c < 3; c++) {
                assertTrue(Alignment.isAligned(to[c]) && Alignment.isAligned(so[c]), "batch " + batch);
                long targetEnd = c + 1 < 3 ? to[c + 1] : l.targetBytes();
                long stagingEnd = c + 1 < 3 ? so[c + 1] : l.stagingBytes();
                for (BatchPlan p : plans) {
                    ColumnPlan cp = p.columns().get(c);
                    assertTrue(to[c] + cp.headPad() + cp.bytes() <= targetEnd, "batch " + batch + " column " + c);
                    assertTrue(so[c] + cp.stagingBytes() <= stagingEnd, "batch " + batch + " column " + c);
                }
            }
            assertTrue(Alignment.isAligned(l.targetBytes()) && Alignment.isAligned(l.stagingBytes()));
        }
    }
}
