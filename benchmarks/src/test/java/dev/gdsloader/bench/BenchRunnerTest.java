package dev.gdsloader.bench;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeFalse;

import dev.gdsloader.cuda.Cuda;
import dev.gdsloader.loader.LoaderOptions;
import dev.gdsloader.loader.path.PathTaken;
import dev.gdsloader.loader.path.ReadPath;
import dev.gdsloader.loader.dataset.Dataset;
import dev.gdsloader.loader.sampler.SamplerOptions;
import dev.gdsloader.loader.sampler.Shuffle;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** {@link BenchRunner} end to end over a small generated dataset on the host path. */
class BenchRunnerTest {
    /** 3 shards of 18 records of 150528 bytes (224 x 224 x 3, not 4 KiB aligned). */
    private static final int RECORD = 150_528;
    private static final long DATA_BYTES = 3L * 18 * RECORD;

    @TempDir
    static Path dir;
    static List<Path> shards;

    @BeforeAll
    static void generate() throws IOException {
        shards = SyntheticDataset.generate(dir, 8L << 20, 3, RECORD, 7);
    }

    /** 2 I/O threads, 256 KiB reads, 3 slots, O_DIRECT. */
    private static final LoaderOptions LOADER = LoaderOptions.defaults().withIoThreads(2).withMaxIoBytes(256L << 10)
            .withPrefetchDepth(3).withDirectIo(true);

    private static BenchConfig config(List<ReadPath> paths, boolean verify, int rounds) {
        // 1 MiB batches: 6 records per batch, 9 batches per epoch
        return new BenchConfig(dir, paths, 1L << 20, LOADER, false, verify, rounds);
    }

    @Test
    void aGloballyShuffledRunIsVerifiedAgainstTheShuffledOrderAndReportsCpuSecondsPerGigabyte() throws IOException {
        assumeFalse(Cuda.availability().available(), "CUDA is available here");
        LoaderOptions shuffled = LOADER.withSampler(SamplerOptions.sequential().withShuffle(Shuffle.GLOBAL, 5));
        BenchConfig c = new BenchConfig(dir, List.of(ReadPath.HOST), 1L << 20, shuffled, false, true, 1);
        BenchReport r = BenchRunner.run(c, discard());
        BenchRow row = r.rows().get(0);
        assertEquals("OK", row.checksum(), r.notes().toString());
        assertEquals("GLOBAL shuffle, seed 5", r.order());
        assertTrue(row.cpuSecondsPerGigabyte() > 0 && Double.isFinite(row.cpuSecondsPerGigabyte()), row.toString());
        assertEquals(null, r.gather(), "no gather ceiling without a GPU");
        // the check follows the shuffled order: its expected CRCs are not the sequential ones
        Dataset ds = Dataset.open(dir);
        long[][] seq = Checksums.expected(ds, BenchRunner.plans(ds, SamplerOptions.sequential(), 6));
        long[][] shuf = Checksums.expected(ds, BenchRunner.plans(ds, shuffled.sampler(), 6));
        assertEquals(seq.length, shuf.length);
        assertFalse(java.util.Arrays.deepEquals(seq, shuf), "a global shuffle of 54 records left every batch in place");
        ByteArrayOutputStream printed = new ByteArrayOutputStream();
        r.print(new PrintStream(printed, true, StandardCharsets.UTF_8));
        assertTrue(text(printed).contains("GLOBAL shuffle, seed 5"), text(printed));
        assertTrue(text(printed).lines().anyMatch(l -> l.startsWith("HOST") && l.trim().matches(".* "
                + java.util.regex.Pattern.quote(BenchReport.cpu(row.cpuSecondsPerGigabyte())) + " +"
                + java.util.regex.Pattern.quote(BenchReport.heap(row.heapBytesPerBatch())))), text(printed));
        // 9 batches, 3 slots: the heap figure covers the 6 after the ring's first fill
        assertTrue(row.heapBytesPerBatch() >= 0 && Double.isFinite(row.heapBytesPerBatch()), row.toString());
    }

    @Test
    void aGlobalShuffleOfSmallRecordsReadWithODirectSaysWhyItIsSlowAndWhatToUseInstead(@TempDir Path small) throws IOException {
        assumeFalse(Cuda.availability().available(), "CUDA is available here");
        SyntheticDataset.generate(small, 256L << 10, 2, 784, 3);
        LoaderOptions shuffled = LOADER.withSampler(SamplerOptions.sequential().withShuffle(Shuffle.GLOBAL, 5));
        BenchReport r = BenchRunner.run(new BenchConfig(small, List.of(ReadPath.HOST), 64L << 10, shuffled, false, false, 1),
                discard());
        List<String> notes = r.notes().stream().filter(n -> n.startsWith("note: --shuffle global with O_DIRECT")).toList();
        assertEquals(1, notes.size(), r.notes().toString());
        assertTrue(notes.get(0).contains("every 784-byte record is a separate aligned read of at least 4 KiB"), notes.get(0));
        assertTrue(notes.get(0).contains("--no-direct") && notes.get(0).contains("MAPPED"), notes.get(0));
        // buffered reads, no shuffle, or records of 64 KiB and more: no note
        Dataset ds = Dataset.open(small);
        assertTrue(BenchRunner.smallRecordsDirectNote(ds, shuffled.withDirectIo(false), List.of(ReadPath.HOST)).isEmpty());
        assertTrue(BenchRunner.smallRecordsDirectNote(ds, LOADER, List.of(ReadPath.HOST)).isEmpty());
        assertTrue(BenchRunner.smallRecordsDirectNote(Dataset.open(dir), shuffled, List.of(ReadPath.HOST)).isEmpty());
    }

    private static PrintStream discard() {
        return new PrintStream(new ByteArrayOutputStream(), true, StandardCharsets.UTF_8);
    }

    private static String text(ByteArrayOutputStream b) {
        return b.toString(StandardCharsets.UTF_8);
    }

    @Test
    void withoutAGpuOnlyTheHostPathRunsVerifiedAndTheReportSaysWhy() throws IOException {
        assumeFalse(Cuda.availability().available(), "CUDA is available here");
        ByteArrayOutputStream log = new ByteArrayOutputStream();
        BenchReport r = BenchRunner.run(config(List.of(), true, 1), new PrintStream(log, true, StandardCharsets.UTF_8));
        assertEquals(1, r.rows().size());
        BenchRow row = r.rows().get(0);
        assertEquals(ReadPath.HOST, row.requested());
        assertEquals(PathTaken.HOST, row.taken());
        assertEquals("OK", row.checksum());
        assertTrue(r.allChecksumsOk());
        assertEquals(DATA_BYTES, r.dataBytes());
        assertEquals(6, r.batchRecords(), "1 MiB / 150528-byte records");
        assertEquals(9, row.batches());
        assertEquals(1, r.rounds());
        assertTrue(row.minGbps() <= row.gbps() && row.gbps() <= row.maxGbps(), row.toString());
        assertTrue(r.notes().stream().anyMatch(n -> n.startsWith("no GPU path ran")), r.notes().toString());
        assertTrue(r.notes().stream().anyMatch(n -> n.contains(Cuda.availability().reason())), r.notes().toString());
        assertTrue(text(log).contains("path HOST"), text(log));
        assertTrue(text(log).contains("CRC32C"), text(log));

        ByteArrayOutputStream printed = new ByteArrayOutputStream();
        r.print(new PrintStream(printed, true, StandardCharsets.UTF_8));
        String table = text(printed);
        assertTrue(table.contains("raw O_DIRECT read"), table);
        assertTrue(table.lines().anyMatch(l -> l.startsWith("HOST") && l.contains(" OK ")), table);
        assertTrue(table.lines().anyMatch(l -> l.startsWith("no GPU path ran")), table);
    }

    @Test
    void anExplicitHostPathRunsAloneWithoutTheNoGpuNote() throws IOException {
        BenchReport r = BenchRunner.run(config(List.of(ReadPath.HOST), true, 1), discard());
        assertEquals(List.of(ReadPath.HOST), r.rows().stream().map(BenchRow::requested).toList());
        assertEquals("OK", r.rows().get(0).checksum());
        assertFalse(r.notes().stream().anyMatch(n -> n.startsWith("no GPU path ran")), r.notes().toString());
    }

    @Test
    void withoutVerificationTheChecksumIsNotChecked() throws IOException {
        BenchReport r = BenchRunner.run(config(List.of(ReadPath.HOST), false, 1), discard());
        assertEquals("not checked", r.rows().get(0).checksum());
        assertTrue(r.allChecksumsOk());
        assertEquals(9, r.rows().get(0).batches());
    }

    @Test
    void severalRoundsGiveOneVerifiedRowPerPath() throws IOException {
        BenchReport r = BenchRunner.run(config(List.of(ReadPath.HOST), true, 3), discard());
        assertEquals(3, r.rounds());
        assertEquals(1, r.rows().size());
        assertEquals("OK", r.rows().get(0).checksum());
        assertEquals(9, r.rows().get(0).batches());
    }

    @Test
    void aDirectoryWithoutShardsFailsNamingIt() throws IOException {
        Path empty = Files.createDirectories(dir.resolve("empty"));
        IOException e = assertThrows(IOException.class, () -> BenchRunner.run(
                new BenchConfig(empty, List.of(), 1L << 20, LOADER, false, true, 1), discard()));
        assertTrue(e.getMessage().contains(empty.toString()), e.getMessage());
    }

    @Test
    void configRejectsNonPositiveSizesAndRounds() {
        assertThrows(IllegalArgumentException.class, () -> new BenchConfig(dir, List.of(), 0, LOADER, false, true, 1));
        assertThrows(IllegalArgumentException.class, () -> new BenchConfig(dir, List.of(), 4096, LOADER, false, true, 0));
        assertThrows(NullPointerException.class, () -> new BenchConfig(dir, List.of(), 4096, null, false, true, 1));
    }

    @Test
    void theHeapFigureIsTheLowestKnownRound() {
        assertEquals(300, BenchRunner.lowest(new double[] {4000, Double.NaN, 300, 500}), 0);
        assertTrue(Double.isNaN(BenchRunner.lowest(new double[] {Double.NaN})));
    }

    @Test
    void aReportWithAFailedRowIsNotAllOk() {
        BenchRow failed = new BenchRow(ReadPath.HOST, PathTaken.HOST, 1, 1, 1, 1, 0, "FAILED (1)", 1, false);
        BenchRow passed = new BenchRow(ReadPath.HOST, PathTaken.HOST, 1, 1, 1, 1, 0, "OK", 1, false);
        BenchRow unchecked = new BenchRow(ReadPath.HOST, PathTaken.HOST, 1, 1, 1, 1, 0, "not checked", 1, false);
        BenchReport bad = new BenchReport(1, 1, 1, 1, true, false, List.of(passed, failed), List.of());
        BenchReport ok = new BenchReport(1, 1, 1, 1, true, false, List.of(passed, unchecked), List.of());
        assertFalse(bad.allChecksumsOk());
        assertTrue(ok.allChecksumsOk());
    }
}
