package dev.gdsloader.loader.io;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.gdsloader.cufile.CuFileMode;
import dev.gdsloader.loader.TestShards;
import dev.gdsloader.loader.dataset.Dataset;
import dev.gdsloader.loader.plan.ColumnPieces;
import dev.gdsloader.loader.plan.ReadPlanner;
import dev.gdsloader.loader.plan.SlotPlan;
import dev.gdsloader.loader.sampler.EpochOrder;
import dev.gdsloader.loader.sampler.Partition;
import dev.gdsloader.loader.sampler.Sampler;
import dev.gdsloader.loader.sampler.SamplerOptions;
import dev.gdsloader.loader.sampler.Shuffle;
import dev.gdsloader.loader.spi.EngineConfig;
import dev.gdsloader.loader.spi.SlotLayout;
import dev.gdsloader.loader.spi.SlotLoad;
import java.io.IOException;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * The GDS engine's routing, planned without a GPU: every byte of every column view is written by exactly one
 * operation, from the right file byte; pieces under the threshold (and only those) go through the pinned image, and
 * the copy runs cover exactly their bytes; cuFile reads never land in a copy run.
 */
class GdsRoutingTest {
    @TempDir
    Path dir;

    @ParameterizedTest(name = "threshold {0}, {1}, batch {2}")
    @CsvSource({"0, NONE, 64", "2000, NONE, 64", "2000, NONE, 5", "1048576, NONE, 1000", "0, GLOBAL, 64",
                "2000, GLOBAL, 100", "1048576, GLOBAL, 64", "100000, NONE, 300"})
    void everyViewByteHasOneOperationFromItsFileByte(long threshold, Shuffle shuffle, int batch) throws IOException {
        int[] shards = {7, 130, 1, 300};
        TestShards.writeImages(dir, shards);
        TestShards.writeLabels(dir, shards);
        Dataset ds = Dataset.open(dir);
        long[] shardRecords = Arrays.stream(shards).asLongStream().toArray();
        Sampler sampler = new Sampler(new SamplerOptions(shuffle, 3, batch, 0, 1, Partition.EXACT_ONCE, false),
                shardRecords, batch);
        int[] maxPieces = new int[ds.columns().size()];
        Arrays.fill(maxPieces, sampler.maxPiecesPerBatch(batch, shards.length));
        SlotLayout layout = SlotLayout.forBatch(ds.columns(), batch, c -> maxPieces[c]);
        try (GdsEngine engine = new GdsEngine(ds, new EngineConfig(8192, false, threshold), CuFileMode.COMPAT)) {
            int capacity = engine.maxOps(layout, maxPieces);
            GdsEngine.Ops ops = engine.ops(null, layout, capacity);
            SlotLoad load = new SlotLoad("slot 0", capacity, ops, new AtomicLong());
            SlotPlan plan = new SlotPlan(maxPieces);
            EpochOrder order = sampler.order(0);
            int stagedPieces = 0;
            for (int b = 0; b < ReadPlanner.batches(order.size(), batch, false); b++) {
                ReadPlanner.planInto(ds, order, b, batch, plan);
                load.start(plan, r -> { }); // plans only: no task runs
                long[] fileOf = new long[Math.toIntExact(layout.targetBytes())];
                Arrays.fill(fileOf, -1);
                byte[] route = new byte[fileOf.length];
                int[] writers = new int[fileOf.length];
                for (int i = 0; i < load.opCount(); i++) {
                    long[] op = ops.op(i); // column, file offset, length, target, staged
                    for (long k = 0; k < op[2]; k++) {
                        int at = Math.toIntExact(op[3] + k);
                        writers[at]++;
                        fileOf[at] = op[1] + k;
                        route[at] = (byte) (op[4] + 1);
                    }
                }
                boolean[] inRun = new boolean[fileOf.length];
                for (long[] run : ops.runs()) {
                    for (long k = 0; k < run[1]; k++) {
                        inRun[Math.toIntExact(run[0] + k)] = true;
                    }
                }
                for (int c = 0; c < plan.columnCount(); c++) {
                    ColumnPieces p = plan.column(c);
                    long view = engine.viewOffset(layout, p);
                    for (int i = 0; i < p.count(); i++) {
                        boolean staged = p.end(i) - p.start(i) < threshold;
                        stagedPieces += staged ? 1 : 0;
                        for (long k = 0; k < p.end(i) - p.start(i); k++) {
                            int at = Math.toIntExact(view + p.view(i) + k);
                            String where = plan.describe() + ", column " + c + ", piece " + i + ", byte " + k;
                            assertEquals(1, writers[at], where + ": operations writing it");
                            assertEquals(p.start(i) + k, fileOf[at], where + ": file byte");
                            assertEquals(staged ? 2 : 1, route[at], where + ": route (2 staged, 1 cuFile)");
                            assertEquals(staged, inRun[at], where + ": in a copy run");
                        }
                    }
                }
                for (int at = 0; at < fileOf.length; at++) {
                    assertTrue(!inRun[at] || route[at] == 2, "copy run over byte " + at + " that no staged read wrote");
                }
                // nothing ran, so the entry stays busy: a fresh one plans the next batch
                load = new SlotLoad("slot 0", capacity, ops, new AtomicLong());
            }
            assertEquals(threshold > 0, stagedPieces > 0, "pieces staged: " + stagedPieces);
        }
    }
}
