package dev.gdsloader.loader.io;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import dev.gdsloader.cuda.MappedShards;
import dev.gdsloader.formats.HostDecodedRecords;
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
import dev.gdsloader.loader.slot.SlotAllocation;
import dev.gdsloader.loader.spi.EngineConfig;
import dev.gdsloader.loader.spi.EngineProvider;
import dev.gdsloader.loader.spi.IoEngine;
import dev.gdsloader.loader.spi.SlotLayout;
import dev.gdsloader.loader.spi.SlotLoad;
import dev.gdsloader.memory.MemoryKind;
import dev.gdsloader.memory.NativeAllocator;
import java.io.IOException;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * MAPPED over a mixed dataset, without a GPU: real {@code .npz} archives ({@link TestShards#writeMixedNpz}: deflated
 * members are host-decoded, stored ones mappable, in both columns). Only files holding a mappable shard are mapped and
 * charged; the budget verdict counts only them and names the staged runs; each batch's plan gives the mapped pieces to
 * copies and gathers (each byte once, from the right file byte) and leaves exactly the host-decoded pieces to the
 * staged reads (run as operations 1.. after one standing for the GPU's issue, as {@code MappedEngine} composes them),
 * which (over host memory standing in for the pinned staging and the device) put their decoded bytes
 * at the same view offsets; together the two routes make every record of every batch byte-exact.
 */
class MappedMixedRoutingTest {
    private static final int[] SHARDS = {1500, 900, 2100, 1300};

    @TempDir
    Path dir;

    private static NativeAllocator budget(long hostBytes) {
        return NativeAllocator.root().newChild("MappedMixedRoutingTest", hostBytes, NativeAllocator.UNLIMITED);
    }

    /** @return the archives that hold a mappable member (1, 2 and 3) with their sizes */
    private static long mappableBytes(List<Path> archives) throws IOException {
        long n = 0;
        for (Path f : archives.subList(1, archives.size())) {
            n += Files.size(f);
        }
        return n;
    }

    @Test
    void onlyMappableShardsAreMappedChargedAndCountedAgainstTheBudget() throws IOException {
        List<Path> archives = TestShards.writeMixedNpz(dir, SHARDS);
        Dataset ds = Dataset.open(dir);
        int images = index(ds, "images");
        int labels = index(ds, "labels");
        boolean[][] staged = MappedEngine.stagedShards(ds);
        assertArrayEquals(new boolean[] {true, false, true, false}, staged[images]);
        assertArrayEquals(new boolean[] {true, false, false, true}, staged[labels]);
        assertEquals(4, MappedEngine.stagedRuns(ds));
        Map<Path, Long> files = MappedEngine.files(ds);
        assertEquals(java.util.Set.copyOf(archives.subList(1, 4).stream().map(p -> p.toAbsolutePath().normalize()).toList()),
                files.keySet(), "archive 0 holds no mappable member: not mapped");
        long mappable = mappableBytes(archives);
        MappedShards registry = new MappedShards(MappedShards.IDENTITY);
        try (NativeAllocator a = budget(mappable)) {
            try (MappedEngine e = new MappedEngine(ds, MappedEngineTest.config(a), registry, -1)) {
                assertEquals(3, registry.size());
                assertEquals(mappable, e.registeredBytes());
                assertEquals(mappable, a.usage().bytes(MemoryKind.HOST_REGISTERED), "a budget of the mappable bytes holds");
                assertEquals(4, e.stagedRuns());
            }
            assertEquals(0, registry.size());
            assertEquals(0, a.outstandingBytes());
            String support = "read-only host registration supported";
            EngineProvider.Verdict auto = MappedEngine.Provider.verdict(files, 4, a, false, support);
            assertTrue(auto.serves(), auto.reason());
            assertTrue(auto.reason().startsWith("the dataset's mappable shards ("), auto.reason());
            assertTrue(auto.reason().endsWith(") fit the host budget and " + support + ": shards registered, read by the GPU "
                    + "from the page cache; 4 host-decoded shard runs decoded on the host and copied through pinned staging"),
                    auto.reason());
            EngineProvider.Verdict asked = MappedEngine.Provider.verdict(files, 4, a, true, support);
            assertEquals(EngineProvider.Verdict.yes("4 host-decoded shard runs decoded on the host and copied through "
                    + "pinned staging"), asked);
        }
        try (NativeAllocator tight = budget(mappable - 1)) {
            EngineProvider.Verdict v = MappedEngine.Provider.verdict(files, 4, tight, true, "x");
            assertFalse(v.serves());
            assertTrue(v.reason().startsWith("MAPPED path refused: the dataset's 3 shard file(s) (" + mappable + " bytes, "),
                    v.reason());
            assertTrue(v.reason().endsWith(" (4 host-decoded shard runs not counted: staged, not registered)"), v.reason());
        }
    }

    @Test
    void aDatasetWithoutAnyMappableShardIsLeftToBounceUnderAutoButServedOnRequest() throws IOException {
        TestShards.writeMixedNpz(dir, 40); // archive 0 only: both members deflated
        Dataset ds = Dataset.open(dir);
        Map<Path, Long> files = MappedEngine.files(ds);
        assertTrue(files.isEmpty());
        try (NativeAllocator a = budget(NativeAllocator.UNLIMITED)) {
            assertEquals(EngineProvider.Verdict.no("MAPPED declined: every shard is host-decoded (2 host-decoded shard runs): "
                    + "nothing to map"), MappedEngine.Provider.verdict(files, 2, a, false, "x"));
            assertTrue(MappedEngine.Provider.verdict(files, 2, a, true, "x").serves());
        }
    }

    @Test
    void aDatasetWithoutHostDecodedShardsPlansNoStagingAndSaysSoAsBefore() throws IOException {
        TestShards.writeImages(dir, 30, 40);
        Dataset ds = Dataset.open(dir);
        assertNull(MappedEngine.stagedShards(ds), "no per-piece check where nothing is staged");
        assertEquals(0, MappedEngine.stagedRuns(ds));
        try (NativeAllocator a = budget(NativeAllocator.UNLIMITED)) {
            EngineProvider.Verdict v = MappedEngine.Provider.verdict(MappedEngine.files(ds), 0, a, false, "s");
            assertTrue(v.reason().startsWith("the dataset ("), v.reason());
            assertTrue(v.reason().endsWith(") fits the host budget and s: shards registered, read by the GPU from the page "
                    + "cache"), v.reason());
            assertEquals(EngineProvider.Verdict.yes(""), MappedEngine.Provider.verdict(MappedEngine.files(ds), 0, a, true, "s"));
        }
    }

    @ParameterizedTest(name = "{0}, batch {1}")
    @CsvSource({"NONE, 1700", "NONE, 333", "SHARD_BLOCKS, 1400", "GLOBAL, 512", "GLOBAL, 97"})
    void hostDecodedPiecesAreStagedAndTheRestMappedByteExact(Shuffle shuffle, int batch) throws Exception {
        List<Path> archives = TestShards.writeMixedNpz(dir, SHARDS);
        Dataset ds = Dataset.open(dir);
        boolean[][] staged = MappedEngine.stagedShards(ds);
        long[] shardRecords = Arrays.stream(SHARDS).asLongStream().toArray();
        Sampler sampler = new Sampler(new SamplerOptions(shuffle, 5, batch, 0, 1, Partition.EXACT_ONCE, false),
                shardRecords, batch);
        int[] maxPieces = new int[ds.columns().size()];
        Arrays.fill(maxPieces, sampler.maxPiecesPerBatch(batch, SHARDS.length));
        SlotLayout layout = SlotLayout.forBatch(ds.columns(), batch, c -> maxPieces[c]);
        MappedShards registry = new MappedShards(MappedShards.IDENTITY);
        EngineConfig config = new EngineConfig(64 << 10, false, 0, NativeAllocator.root());
        List<MappedShards.Lease> bases = new ArrayList<>();
        long[] notPacked = new long[ds.columns().size()];
        Arrays.fill(notPacked, -1);
        try (NativeAllocator a = budget(NativeAllocator.UNLIMITED);
             MappedEngine engine = new MappedEngine(ds, MappedEngineTest.config(a), registry, -1);
             StagedReads reads = new StagedReads(ds, config, staged);
             BounceEngine.BounceSlot slot = SlotAllocation.build(x -> BounceEngine.BounceSlot.onHost(layout, 0, x, a))) {
            byte[][] content = new byte[archives.size() - 1][]; // archive 0 is not mapped
            for (int i = 1; i < archives.size(); i++) {
                bases.add(registry.acquire(archives.get(i)));
                content[i - 1] = Files.readAllBytes(archives.get(i));
            }
            MappedPlan plan = engine.newPlan(layout);
            // as MappedEngine composes it: operation 0 stands for the GPU's issue, the staged reads are operations 1..
            int capacity = 1 + IoEngine.maxReads(layout, maxPieces, reads.maxIo());
            SlotLoad.Work staged2 = reads.work(slot, layout, notPacked, false, capacity);
            int[] issued = new int[1];
            SlotLoad load = new SlotLoad("slot 0", capacity, new SlotLoad.Work() {
                @Override
                public void plan(SlotPlan p, SlotLoad l) {
                    assertEquals(0, l.add(1));
                    staged2.plan(p, l);
                }

                @Override
                public long run(int from, int to) throws IOException {
                    issued[0] += from == 0 ? 1 : 0;
                    return Math.max(from, 1) < to ? staged2.run(Math.max(from, 1), to) : 0;
                }

                @Override
                public void finish() {
                }
            }, new java.util.concurrent.atomic.AtomicLong());
            SlotPlan batchPlan = new SlotPlan(maxPieces);
            EpochOrder order = sampler.order(2);
            MemorySegment host = slot.hostTarget();
            long stagedTotal = 0;
            long mappedTotal = 0;
            for (int b = 0; b < ReadPlanner.batches(order.size(), batch, false); b++) {
                MappedPlanTest.Applied applied = MappedPlanTest.planAndApply(engine, ds, plan, order, b, batch, batchPlan, layout,
                        bases, content);
                int[] writers = applied.writers();
                byte[] view = applied.view();
                host.fill((byte) 0);
                load.start(batchPlan, Runnable::run);
                long read = load.await(TimeUnit.SECONDS.toNanos(30));
                assertEquals(plan.stagedBytes(), read, "the staged reads read exactly the host-decoded pieces");
                assertEquals(b + 1, issued[0], "operation 0 runs once per batch");
                stagedTotal += plan.stagedBytes();
                long expectStaged = 0;
                for (int c = 0; c < batchPlan.columnCount(); c++) {
                    ColumnPieces p = batchPlan.column(c);
                    long at0 = layout.targetOffsets()[c];
                    boolean decodedShardInBatch = false;
                    for (int i = 0; i < p.count(); i++) {
                        boolean st = staged[c][p.shard(i)];
                        assertEquals(st, ds.columns().get(c).shards().get(p.shard(i)) instanceof HostDecodedRecords);
                        decodedShardInBatch |= st;
                        long len = p.end(i) - p.start(i);
                        expectStaged += st ? len : 0;
                        mappedTotal += st ? 0 : len;
                        for (long k = 0; k < len; k++) {
                            int at = Math.toIntExact(at0 + p.view(i) + k);
                            if (writers[at] != (st ? 0 : 1)) {
                                fail(batchPlan.describe() + ", column " + c + ", piece " + i + " (shard " + p.shard(i)
                                        + (st ? ", staged" : ", mapped") + "), byte " + k + ": " + writers[at] + " GPU writers");
                            }
                            if (st) {
                                view[at] = host.get(ValueLayout.JAVA_BYTE, at);
                            } else if (host.get(ValueLayout.JAVA_BYTE, at) != 0 && view[at] != host.get(ValueLayout.JAVA_BYTE, at)) {
                                fail(batchPlan.describe() + ": the staged reads wrote a mapped byte at " + at);
                            }
                        }
                    }
                    if (decodedShardInBatch) {
                        assertFalse(plan.byRecord(c), "a column with staged pieces goes by entry");
                    }
                }
                assertEquals(expectStaged, plan.stagedBytes());
                String[] names = ds.columns().stream().map(c -> c.name()).toArray(String[]::new);
                for (int c = 0; c < names.length; c++) {
                    long at0 = layout.targetOffsets()[c];
                    long rb = ds.columns().get(c).recordBytes();
                    for (int r = 0; r < batchPlan.records(); r++) {
                        long record = order.get(b * batch + r);
                        for (int j = 0; j < rb; j++) {
                            byte want = names[c].equals("labels") ? TestShards.label(record) : TestShards.imageByte(record, j);
                            byte got = view[Math.toIntExact(at0 + r * rb + j)];
                            if (got != want) {
                                fail(batchPlan.describe() + ", column " + names[c] + ", record " + record + ", byte " + j
                                        + ": " + got + ", expected " + want);
                            }
                        }
                    }
                }
            }
            assertTrue(stagedTotal > 0 && mappedTotal > 0, "both routes used: " + stagedTotal + " staged, "
                    + mappedTotal + " mapped");
        } finally {
            bases.forEach(MappedShards.Lease::close);
        }
        assertEquals(0, registry.size());
    }

    private static int index(Dataset ds, String name) {
        for (int c = 0; c < ds.columns().size(); c++) {
            if (ds.columns().get(c).name().equals(name)) {
                return c;
            }
        }
        throw new AssertionError("no column " + name);
    }
}
