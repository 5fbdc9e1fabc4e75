package dev.gdsloader.loader.io;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import dev.gdsloader.formats.DType;
import dev.gdsloader.formats.npy.NpyWriter;
import dev.gdsloader.formats.raw.RawWriter;
import dev.gdsloader.loader.dataset.Column;
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
import dev.gdsloader.loader.spi.IoEngine;
import dev.gdsloader.loader.spi.SlotLayout;
import dev.gdsloader.loader.spi.SlotLoad;
import dev.gdsloader.loader.spi.SlotMemory;
import dev.gdsloader.memory.NativeAllocator;
import java.io.IOException;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.function.BiFunction;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * The staged engines' planning, packing, exact and aligned reads and copy offsets, run without a GPU: the bounce
 * engine over host memory standing in for pinned and device memory ({@link BounceEngine#onHost}, the same
 * operations and copy offsets as on the device, with a host {@link CopyStep}) and the host engine load real
 * {@code .npy} and raw shard files written to a temporary directory, batch by batch, sequential and under a global
 * shuffle, and every byte of every view is compared with the bytes written to the files.
 *
 * <p>Columns: {@code small} (784-byte records: packed into the pinned image, one copy per column), {@code tiny}
 * (1-byte records) and {@code large} (70,000-byte records, at least {@link BounceEngine#PACK_BELOW}: one copy per
 * read, several reads per piece with a 64 KiB maximum read), in shards of 37, 50 and 13 records so that batches
 * cross shard boundaries.
 */
class StagedEnginesOnHostTest {
    private static final int[] SHARDS = {37, 50, 13};
    private static final int RECORDS = 100;
    private static final int SMALL = 784;
    private static final int LARGE = 70_000;
    private static final long MAX_IO = 64 << 10;

    @TempDir
    static Path dir;
    private static Path npy;
    private static Path raw;
    /** Per column name: every record's bytes, back to back, exactly as written to the shards. */
    private static final java.util.Map<String, byte[]> WRITTEN = new java.util.HashMap<>();
    private static ExecutorService pool;

    @BeforeAll
    static void writeShards() throws IOException {
        Random rnd = new Random(11);
        for (var col : List.of(new Object[] {"small", SMALL}, new Object[] {"tiny", 1}, new Object[] {"large", LARGE})) {
            byte[] b = new byte[RECORDS * (int) col[1]];
            rnd.nextBytes(b);
            WRITTEN.put((String) col[0], b);
        }
        npy = Files.createDirectories(dir.resolve("npy"));
        raw = Files.createDirectories(dir.resolve("raw"));
        for (String name : WRITTEN.keySet()) {
            int rec = WRITTEN.get(name).length / RECORDS;
            int first = 0;
            for (int s = 0; s < SHARDS.length; s++) {
                byte[] part = java.util.Arrays.copyOfRange(WRITTEN.get(name), first * rec, (first + SHARDS[s]) * rec);
                long[] shape = rec == 1 ? new long[] {SHARDS[s]} : new long[] {SHARDS[s], rec};
                NpyWriter.write(npy.resolve(String.format("%s-%05d.npy", name, s)), DType.UINT8, shape, part);
                RawWriter.write(raw.resolve(String.format("%s-%05d.bin", name, s)), DType.UINT8,
                        rec == 1 ? new long[0] : new long[] {rec}, part);
                first += SHARDS[s];
            }
        }
        pool = Executors.newFixedThreadPool(3);
    }

    @AfterAll
    static void stopPool() {
        pool.shutdownNow();
    }

    /** The engines under test, by name. */
    enum Kind {
        BOUNCE_ON_HOST(BounceEngine::onHost),
        HOST(HostEngine::new);

        @SuppressWarnings("ImmutableEnumChecker") // constructor references: stateless
        final BiFunction<Dataset, EngineConfig, IoEngine<?>> make;

        Kind(BiFunction<Dataset, EngineConfig, IoEngine<?>> make) {
            this.make = make;
        }
    }

    static Stream<Arguments> cases() {
        List<Arguments> a = new ArrayList<>();
        for (Kind k : Kind.values()) {
            for (String format : List.of("npy", "raw")) {
                for (boolean direct : List.of(false, true)) {
                    for (Shuffle s : List.of(Shuffle.NONE, Shuffle.GLOBAL)) {
                        for (int batch : List.of(16, 45)) {
                            a.add(Arguments.of(k, format, direct, s, batch));
                        }
                    }
                }
            }
        }
        return a.stream();
    }

    @ParameterizedTest(name = "{0} {1} direct={2} {3} batch {4}")
    @MethodSource("cases")
    void everyViewHoldsTheFileBytesOfItsRecords(Kind kind, String format, boolean direct, Shuffle shuffle, int batch)
            throws Exception {
        Dataset ds = Dataset.open(format.equals("npy") ? npy : raw);
        if (direct) {
            try (var f = dev.gdsloader.posix.PosixFile.openForRead(ds.columns().get(0).shards().get(0).file(), true)) {
                org.junit.jupiter.api.Assumptions.assumeTrue(f.isDirect(),
                        "the temporary directory's filesystem refuses O_DIRECT: aligned covers not exercised here");
            }
        }
        int checked = load(kind, ds, direct, shuffle, batch, (order, from, records, column, view) -> {
            byte[] all = WRITTEN.get(column.name());
            int rec = (int) column.recordBytes();
            for (int i = 0; i < records; i++) {
                long g = order.get(from + i);
                for (int j = 0; j < rec; j++) {
                    byte want = all[(int) (g * rec + j)];
                    byte got = view.get(ValueLayout.JAVA_BYTE, (long) i * rec + j);
                    if (want != got) {
                        fail(kind + " " + format + ": column " + column.name() + ", batch position " + i + " (record " + g
                                + "), byte " + j + ": expected " + want + ", found " + got);
                    }
                }
            }
        });
        assertEquals(RECORDS * 3, checked, "every record of every column checked once");
    }

    @Test
    void aBounceBatchOfSmallRecordsIsReadInGroupsNotOneTaskPerRecord() throws Exception {
        Dataset ds = Dataset.open(npy).select(List.of("small"));
        try (BounceEngine engine = BounceEngine.onHost(ds, new EngineConfig(MAX_IO, false, 0))) {
            Fixture f = fixture(ds, Shuffle.GLOBAL, RECORDS);
            try (BounceEngine.BounceSlot slot = engine.allocateSlot(0, f.layout, NativeAllocator.root())) {
                SlotLoad load = engine.newLoad(0, slot, f.layout, f.maxPieces);
                ReadPlanner.planInto(ds, f.sampler.order(0), 0, RECORDS, f.plan);
                load.start(f.plan, pool);
                load.await(TimeUnit.SECONDS.toNanos(30));
                assertTrue(f.plan.column(0).count() > 50, "a global shuffle gives many pieces: " + f.plan.column(0).count());
                assertEquals(f.plan.column(0).count(), load.opCount(), "one exact read per piece");
                assertEquals(1, load.taskCount(), "78 KiB of reads are one pool task");
            }
        }
    }

    /** Checks one column view of one batch. */
    @FunctionalInterface
    interface ViewCheck {
        void check(EpochOrder order, int from, int records, Column column, MemorySegment view);
    }

    @SuppressWarnings("ArrayRecordComponent") // a test's fixture, never compared
    private record Fixture(Sampler sampler, int[] maxPieces, SlotLayout layout, SlotPlan plan) {
    }

    private static Fixture fixture(Dataset ds, Shuffle shuffle, int batch) {
        long[] shardRecords = ds.columns().get(0).shards().stream().mapToLong(r -> r.recordCount()).toArray();
        Sampler sampler = new Sampler(new SamplerOptions(shuffle, 5, batch, 0, 1, Partition.EXACT_ONCE, false),
                shardRecords, batch);
        int[] maxPieces = new int[ds.columns().size()];
        for (int c = 0; c < maxPieces.length; c++) {
            maxPieces[c] = sampler.maxPiecesPerBatch(batch, ds.columns().get(c).shards().size());
        }
        SlotLayout layout = SlotLayout.forBatch(ds.columns(), batch, c -> maxPieces[c]);
        return new Fixture(sampler, maxPieces, layout, new SlotPlan(maxPieces));
    }

    /** Loads one epoch batch by batch through one slot, checking each column view; returns records checked. */
    private static int load(Kind kind, Dataset ds, boolean direct, Shuffle shuffle, int batch, ViewCheck check)
            throws Exception {
        try (IoEngine<?> engine = kind.make.apply(ds, new EngineConfig(MAX_IO, direct, 0))) {
            return load(engine, ds, shuffle, batch, check);
        }
    }

    /** As {@link #load(Kind, Dataset, boolean, Shuffle, int, ViewCheck)}, with the engine's slot type captured. */
    private static <S extends SlotMemory> int load(IoEngine<S> engine, Dataset ds, Shuffle shuffle, int batch,
                                                   ViewCheck check) throws Exception {
        int checked = 0;
        Fixture f = fixture(ds, shuffle, batch);
        EpochOrder order = f.sampler.order(1);
        try (S slot = engine.allocateSlot(0, f.layout, NativeAllocator.root())) {
            SlotLoad load = engine.newLoad(0, slot, f.layout, f.maxPieces);
            for (int b = 0; b < ReadPlanner.batches(order.size(), batch, false); b++) {
                slot.hostTarget().fill((byte) 0x5A); // stale bytes of an earlier batch must not pass
                ReadPlanner.planInto(ds, order, b, batch, f.plan);
                load.start(f.plan, pool);
                long read = load.await(TimeUnit.SECONDS.toNanos(30));
                assertTrue(read >= f.plan.bytes(), "read " + read + " of " + f.plan.bytes() + " bytes");
                for (int c = 0; c < ds.columns().size(); c++) {
                    ColumnPieces p = f.plan.column(c);
                    MemorySegment view = slot.hostTarget().asSlice(engine.viewOffset(f.layout, p), p.bytes());
                    check.check(order, f.plan.from(), f.plan.records(), ds.columns().get(c), view);
                    checked += f.plan.records();
                }
            }
        }
        return checked;
    }
}
