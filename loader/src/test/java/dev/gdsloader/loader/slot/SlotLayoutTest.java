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
import java.io.IOException;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** {@link SlotLayout}: region sizes from batch plans. */
class SlotLayoutTest {
    @TempDir
    Path dir;

    @Test
    void regionsAreSizedForTheLargestViewPlusHeadRoomAndTheLargestStaging() {
        // column 0: views of 5000 and 9000 bytes; column 1: 10 bytes; staging covers differ from view sizes
        List<BatchPlan> plans = List.of(
                new BatchPlan(0, 0, 1, List.of(
                        new ColumnPlan(0, List.of(new Piece(0, 100, 5100, 0)), 5000),
                        new ColumnPlan(1, List.of(new Piece(0, 4090, 4100, 0)), 10))),
                new BatchPlan(1, 1, 1, List.of(
                        new ColumnPlan(0, List.of(new Piece(0, 5100, 10_000, 0), new Piece(1, 128, 4228, 4900)), 9000),
                        new ColumnPlan(1, List.of(new Piece(0, 4100, 4110, 0)), 10))));
        SlotLayout l = SlotLayout.forPlans(plans, 2);
        // column 0 target: up(9000 + 4096) = 16384; column 1 target: up(10 + 4096) = 8192
        assertArrayEquals(new long[] {0, 16384}, l.targetOffsets());
        assertEquals(16384 + 8192, l.targetBytes());
        // column 0 staging: max(8192, (12288 - 4096) + 8192) = 16384; column 1: max(8192, 4096) = 8192
        assertArrayEquals(new long[] {0, 16384}, l.stagingOffsets());
        assertEquals(16384 + 8192, l.stagingBytes());
    }

    @Test
    void noPlansStillGiveOneBlockOfEach() {
        SlotLayout l = SlotLayout.forPlans(List.of(), 2);
        assertEquals(Alignment.BLOCK, l.stagingBytes());
        assertTrue(l.targetBytes() >= Alignment.BLOCK);
    }

    @Test
    void layoutOfARealDatasetHoldsEveryBatchAndKeepsRegionsAligned() throws IOException {
        TestShards.writeImages(dir, 7, 13, 0, 1, 19);
        TestShards.writeLabels(dir, 20, 20);
        TestShards.writeWeights(dir, 11, 29);
        Dataset d = Dataset.open(dir);
        for (int batch : new int[] {1, 5, 32, 64}) {
            List<BatchPlan> plans = ReadPlanner.sequential(d, batch, false);
            SlotLayout l = SlotLayout.forPlans(plans, 3);
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
