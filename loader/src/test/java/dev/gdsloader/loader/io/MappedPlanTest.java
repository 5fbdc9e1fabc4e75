package dev.gdsloader.loader.io;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import dev.gdsloader.cuda.MappedShards;
import dev.gdsloader.formats.DType;
import dev.gdsloader.formats.npy.NpyWriter;
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
import dev.gdsloader.memory.MemoryKind;
import dev.gdsloader.memory.NativeAllocator;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * The MAPPED path's plan, checked without a GPU over real mappings (a registry that registers nothing, so device
 * addresses are the mappings' host addresses): for every sampler, record size, rank and batch, every byte of every
 * column view is written exactly once, by a copy exactly where its piece is at least 1 MiB and by a gather entry
 * otherwise, entries at most 64 KiB and inside their column's region, from the mapped address of the right file
 * byte; and the file bytes at those addresses are the records the sampler put there.
 */
class MappedPlanTest {
    @TempDir
    Path dir;

    private static byte value(long record, int j) {
        return (byte) (record * 31 + j * 7L + 1);
    }

    @ParameterizedTest(name = "{0}, {1} B records, batch {2}, rank {3} of {4}")
    @CsvSource({"NONE, 784, 64, 0, 1", "NONE, 4096, 300, 0, 1", "NONE, 70000, 40, 0, 1", "NONE, 1, 1000, 1, 2",
                "SHARD_BLOCKS, 784, 100, 0, 1", "SHARD_BLOCKS, 70000, 20, 1, 3", "SHARD_BLOCKS, 4096, 512, 0, 1",
                "GLOBAL, 1, 1000, 0, 1", "GLOBAL, 784, 64, 1, 2", "GLOBAL, 4096, 37, 0, 1", "GLOBAL, 70000, 5, 0, 1"})
    void everyViewByteIsPlannedOnceFromItsFileByte(Shuffle shuffle, int recordBytes, int batch, int rank, int world)
            throws IOException {
        int[] shards = {7, 130, 1, 300};
        List<Path> files = new ArrayList<>();
        long first = 0;
        for (int s = 0; s < shards.length; s++) {
            byte[] data = new byte[shards[s] * recordBytes];
            for (int r = 0; r < shards[s]; r++) {
                for (int j = 0; j < recordBytes; j++) {
                    data[r * recordBytes + j] = value(first + r, j);
                }
            }
            Path f = dir.resolve(String.format("x-%05d.npy", s));
            NpyWriter.write(f, DType.UINT8, new long[] {shards[s], recordBytes}, data);
            files.add(f);
            first += shards[s];
        }
        files.addAll(TestShards.writeLabels(dir, shards));
        Dataset ds = Dataset.open(dir);
        assertEquals(List.of("labels", "x"), ds.columns().stream().map(c -> c.name()).toList());
        long[] shardRecords = Arrays.stream(shards).asLongStream().toArray();
        Sampler sampler = new Sampler(new SamplerOptions(shuffle, 3, batch, rank, world, Partition.EXACT_ONCE, false),
                shardRecords, batch);
        int[] maxPieces = new int[ds.columns().size()];
        Arrays.fill(maxPieces, sampler.maxPiecesPerBatch(batch, shards.length));
        SlotLayout layout = SlotLayout.forBatch(ds.columns(), batch, c -> maxPieces[c]);
        MappedShards registry = new MappedShards(MappedShards.IDENTITY);
        NativeAllocator budget = NativeAllocator.root().newChild("MappedPlanTest", NativeAllocator.UNLIMITED,
                NativeAllocator.UNLIMITED);
        // where each file is mapped: a second lease shares the engine's mapping
        List<MappedShards.Lease> bases = new ArrayList<>();
        try (MappedEngine engine = new MappedEngine(ds, new EngineConfig(1 << 20, false, 0, budget), registry, -1)) {
            long fileBytes = files.stream().mapToLong(f -> f.toFile().length()).sum();
            assertEquals(fileBytes, budget.usage().bytes(MemoryKind.HOST_REGISTERED), "each file charged once");
            assertEquals(files.size(), registry.size());
            byte[][] content = new byte[files.size()][];
            for (int i = 0; i < files.size(); i++) {
                bases.add(registry.acquire(files.get(i)));
                content[i] = Files.readAllBytes(files.get(i));
            }
            assertEquals(files.size(), registry.size(), "shared, not mapped again");
            MappedPlan plan = engine.newPlan(layout);
            SlotPlan batchPlan = new SlotPlan(maxPieces);
            EpochOrder order = sampler.order(1);
            int copies = 0;
            int gathered = 0;
            for (int b = 0; b < ReadPlanner.batches(order.size(), batch, false); b++) {
                Applied applied = planAndApply(engine, ds, plan, order, b, batch, batchPlan, layout, bases, content);
                int[] writers = applied.writers();
                byte[] route = applied.route();
                byte[] view = applied.view();
                copies += applied.copies();
                gathered += applied.entries();
                for (int c = 0; c < batchPlan.columnCount(); c++) {
                    if (shuffle == Shuffle.GLOBAL && ds.columns().get(c).recordBytes() <= MappedPlan.CHUNK) {
                        assertTrue(plan.byRecord(c), "a shuffled column of small records goes by record");
                    }
                }
                for (int c = 0; c < batchPlan.columnCount(); c++) {
                    ColumnPieces p = batchPlan.column(c);
                    long at0 = engine.viewOffset(layout, p);
                    long rb = ds.columns().get(c).recordBytes();
                    for (int i = 0; i < p.count(); i++) {
                        byte expectedRoute = (byte) (p.end(i) - p.start(i) >= MappedPlan.COPY_FROM ? 1 : 2);
                        for (long k = 0; k < p.end(i) - p.start(i); k++) {
                            int at = Math.toIntExact(at0 + p.view(i) + k);
                            if (writers[at] != 1 || route[at] != expectedRoute) {
                                fail(batchPlan.describe() + ", column " + c + ", piece " + i + ", byte " + k + ": "
                                        + writers[at] + " writers, route " + route[at] + " (1 copy, 2 gather), expected "
                                        + expectedRoute);
                            }
                        }
                    }
                    for (int r = 0; r < batchPlan.records(); r++) {
                        long record = order.get(b * batch + r);
                        for (int j = 0; j < rb; j++) {
                            byte want = c == 0 ? TestShards.label(record) : value(record, j);
                            byte got = view[Math.toIntExact(at0 + r * rb + j)];
                            if (got != want) {
                                fail(batchPlan.describe() + ", column " + c + ", record " + record + ", byte " + j
                                        + ": " + got + ", expected " + want);
                            }
                        }
                    }
                }
                long covered = Arrays.stream(writers).filter(w -> w > 0).count();
                assertEquals(batchPlan.bytes(), covered, "bytes written = the batch's bytes");
            }
            assertTrue(gathered > 0 || copies > 0);
            if (shuffle == Shuffle.GLOBAL || (long) recordBytes * batch < MappedPlan.COPY_FROM) {
                assertEquals(0, copies, "no piece of 1 MiB here");
            }
            if (shuffle == Shuffle.NONE && (long) recordBytes * batch >= 2 * MappedPlan.COPY_FROM) {
                assertTrue(copies > 0, "large sequential pieces go by copy");
            }
        } finally {
            bases.forEach(MappedShards.Lease::close);
        }
        assertEquals(0, registry.size(), "every mapping undone after close");
        assertEquals(0, budget.outstandingBytes());
        budget.close();
    }

    /**
     * What the GPU would write for one batch: per byte of the slot, how many copies or entries wrote it, by which
     * route (1 copy, 2 gather) and the value.
     */
    @SuppressWarnings("ArrayRecordComponent") // a test's tally, never compared
    record Applied(int copies, int entries, int[] writers, byte[] route, byte[] view) {
    }

    /**
     * Plans batch {@code b} of {@code order} into {@code batchPlan} and {@code plan}, then applies every copy and
     * gather entry, checking each: copies of at least {@link MappedPlan#COPY_FROM} bytes, entries of at most
     * {@link MappedPlan#CHUNK} inside their column's region, the columns' descriptions back to back.
     */
    static Applied planAndApply(MappedEngine engine, Dataset ds, MappedPlan plan, EpochOrder order, int b, int batch,
                                SlotPlan batchPlan, SlotLayout layout, List<MappedShards.Lease> bases, byte[][] content) {
        ReadPlanner.planInto(ds, order, b, batch, batchPlan);
        plan.plan(batchPlan, layout, layout.targetOffsets(), 0, engine.shards());
        int n = Math.toIntExact(layout.targetBytes());
        int[] writers = new int[n];
        byte[] route = new byte[n];
        byte[] view = new byte[n];
        for (int i = 0; i < plan.copies(); i++) {
            assertTrue(plan.copyBytes(i) >= MappedPlan.COPY_FROM, "copy " + i + " of " + plan.copyBytes(i) + " bytes");
            apply(plan.copySource(i), plan.copyTarget(i), plan.copyBytes(i), (byte) 1, bases, content, writers, route, view);
        }
        long[] e = plan.entries();
        int next = 0; // the columns' descriptions are back to back
        int gathered = 0;
        for (int c = 0; c < ds.columns().size(); c++) {
            long lo = layout.targetOffsets()[c];
            long hi = lo + layout.targetRegion(c);
            long rb = ds.columns().get(c).recordBytes();
            assertEquals(next, plan.columnFirst(c), "column " + c + " starts where the one before ended");
            int width = plan.byRecord(c) ? 1 : MappedPlan.ENTRY_LONGS;
            for (int k = 0; k < plan.columnCount(c); k++) {
                gathered++;
                int at = plan.columnFirst(c) + width * k;
                long dst = plan.byRecord(c) ? lo + k * rb : e[at + 1];
                long len = plan.byRecord(c) ? rb : e[at + 2];
                if (len <= 0 || len > MappedPlan.CHUNK || dst < lo || dst + len > hi) {
                    fail("entry " + k + " of column " + c + ": " + len + " bytes at " + dst + ", region " + lo + ".." + hi);
                }
                apply(e[at], dst, len, (byte) 2, bases, content, writers, route, view);
            }
            next = plan.columnFirst(c) + width * plan.columnCount(c);
        }
        assertEquals(plan.usedLongs(), next, "every long of the description belongs to a column");
        return new Applied(plan.copies(), gathered, writers, route, view);
    }

    /** Applies one copy or entry: marks the bytes it writes and takes their values from the file it reads. */
    private static void apply(long src, long dst, long len, byte how, List<MappedShards.Lease> bases, byte[][] content,
                              int[] writers, byte[] route, byte[] view) {
        int file = -1;
        for (int f = 0; f < bases.size(); f++) {
            long base = bases.get(f).hostAddress(0);
            if (src >= base && src + len <= base + bases.get(f).size()) {
                file = f;
            }
        }
        if (file < 0) {
            fail("source 0x" + Long.toHexString(src) + " (" + len + " bytes) in no mapped file");
        }
        long off = src - bases.get(file).hostAddress(0);
        for (long k = 0; k < len; k++) {
            int at = Math.toIntExact(dst + k);
            writers[at]++;
            route[at] = how;
            view[at] = content[file][Math.toIntExact(off + k)];
        }
    }
}
