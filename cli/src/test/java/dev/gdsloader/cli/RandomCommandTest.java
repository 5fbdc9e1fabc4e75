package dev.gdsloader.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code gdsloader random} on the HOST path over real shards on disk: batch size from {@code --batch-bytes},
 * buffered reads, the ceiling skipped or measured, rounds, and the JSON lines the device scripts parse.
 */
class RandomCommandTest {
    @TempDir
    Path dir;

    private Path data;

    @BeforeEach
    void generate() {
        data = dir.resolve("ds");
        CommandRun g = CommandRun.execute(new GenerateCommand(), "--out", data.toString(), "--size", "1MiB", "--shards", "3",
                "--record-bytes", "784");
        assertEquals(0, g.exitCode(), g.toString());
    }

    private static List<String> jsonLines(CommandRun r) {
        return r.out().lines().filter(l -> l.startsWith("{")).toList();
    }

    private static String field(String json, String name) {
        Matcher m = Pattern.compile("\"" + name + "\":(\"[^\"]*\"|\\[[^]]*]|[^,}]+)").matcher(json);
        assertTrue(m.find(), name + " in " + json);
        return m.group(1);
    }

    @Test
    void batchBytesBufferedNoCeilingRoundsGiveOneLoaderRowWithRecordsPerSecondAndCpuPerGb() {
        CommandRun r = CommandRun.execute(new RandomCommand(), "--paths", "HOST", "--threads", "4", "--batch-bytes", "16KiB",
                "--no-direct", "--no-ceiling", "--rounds", "2", "--json", data.toString());
        assertEquals(0, r.exitCode(), r.toString());
        List<String> rows = jsonLines(r);
        assertEquals(1, rows.size(), r.toString());
        String j = rows.get(0);
        assertEquals("\"loader\"", field(j, "reader"), j);
        assertEquals("\"HOST\"", field(j, "path"), j);
        assertEquals("\"HOST\"", field(j, "taken"), j);
        assertEquals(16384 / 784, Integer.parseInt(field(j, "batch_records")), j);
        assertEquals(784, Integer.parseInt(field(j, "record_bytes")), j);
        assertEquals(3 * 445, Long.parseLong(field(j, "records")), j); // 3 shards of (1 MiB / 3) / 784 B
        assertEquals("false", field(j, "direct"), j);
        assertEquals("null", field(j, "x_ceiling"), j);
        assertEquals(2, field(j, "gbps_rounds").split(",").length, j);
        double recordsPerSecond = Double.parseDouble(field(j, "records_per_s"));
        double gbps = Double.parseDouble(field(j, "gbps"));
        assertTrue(recordsPerSecond > 0, j);
        assertEquals(gbps * 1e9 / 784, recordsPerSecond, recordsPerSecond * 1e-4, j);
        double cpu = Double.parseDouble(field(j, "cpu_s_per_gb"));
        assertTrue(cpu > 0 && Double.isFinite(cpu), j);
        assertTrue(r.out().contains("batch 20 (15.3 KiB), warm, buffered reads, 2 rounds"), r.toString());
        assertTrue(r.out().lines().anyMatch(l -> l.startsWith("loader HOST, global shuffle")), r.toString());
    }

    @Test
    void withoutAGpuANoteSaysWhyThereAreNoGatherCeilingRowsUnlessTheyWereNotAskedFor() {
        org.junit.jupiter.api.Assumptions.assumeFalse(dev.gdsloader.cuda.Cuda.availability().available(), "a GPU: the rows run");
        String note = "note: no gather ceiling rows: the gather kernel needs a GPU; CUDA is not available: "
                + dev.gdsloader.cuda.Cuda.availability().reason();
        CommandRun r = CommandRun.execute(new RandomCommand(), "--paths", "HOST", "--threads", "2", "--no-direct", data.toString());
        assertEquals(0, r.exitCode(), r.toString());
        assertTrue(r.out().lines().anyMatch(note::equals), r.toString());
        for (String off : new String[] {"--no-gather-ceiling", "--no-ceiling"}) {
            CommandRun quiet = CommandRun.execute(new RandomCommand(), "--paths", "HOST", "--threads", "2", "--no-direct", off,
                    data.toString());
            assertEquals(0, quiet.exitCode(), quiet.toString());
            assertTrue(quiet.out().lines().noneMatch(l -> l.contains("gather ceiling")), quiet.toString());
        }
    }

    @Test
    void epochsPerLoaderAfterWarmUpEpochsAreTimedAndNamedInTheJsonLine() {
        CommandRun r = CommandRun.execute(new RandomCommand(), "--paths", "HOST", "--threads", "2", "--batch-size", "64",
                "--no-direct", "--no-ceiling", "--epochs", "3", "--warmup-epochs", "1", "--json", data.toString());
        assertEquals(0, r.exitCode(), r.toString());
        String j = jsonLines(r).get(0);
        assertEquals("3", field(j, "epochs"), j);
        assertEquals("1", field(j, "warmup_epochs"), j);
        assertEquals("null", field(j, "gpu_busy"), j); // HOST does not time GPU transfers
        assertTrue(Double.parseDouble(field(j, "records_per_s")) > 0, j);
        assertTrue(r.out().lines().anyMatch(l -> l.startsWith("reader") && l.endsWith("GPU busy")), r.toString());
        assertTrue(r.out().contains("1 round, 3 timed epochs per round after 1 warm-up"), r.toString()); // the header says so
        assertTrue(r.out().lines().noneMatch(l -> l.startsWith("pread ceiling:")), "--no-ceiling: " + r);
        CommandRun zero = CommandRun.execute(new RandomCommand(), "--paths", "HOST", "--epochs", "0", data.toString());
        assertEquals(2, zero.exitCode(), zero.toString());
        assertTrue(zero.err().contains("--epochs"), zero.toString());
    }

    @Test
    void ceilingRowComesFirstAndTheLoaderRowIsARatioOfIt() {
        CommandRun r = CommandRun.execute(new RandomCommand(), "--paths", "HOST", "--threads", "2", "--batch-size", "64",
                "--no-direct", "--json", data.toString());
        assertEquals(0, r.exitCode(), r.toString());
        List<String> rows = jsonLines(r);
        assertEquals(2, rows.size(), r.toString());
        assertEquals("\"pread\"", field(rows.get(0), "reader"), r.toString());
        assertEquals("null", field(rows.get(0), "path"), r.toString());
        assertEquals("1.00000", field(rows.get(0), "x_ceiling"), r.toString());
        double ratio = Double.parseDouble(field(rows.get(1), "gbps")) / Double.parseDouble(field(rows.get(0), "gbps"));
        assertEquals(ratio, Double.parseDouble(field(rows.get(1), "x_ceiling")), ratio * 1e-3, r.toString());
        assertEquals(64, Integer.parseInt(field(rows.get(1), "batch_records")), r.toString());
        // issue 21: the ceiling is warmed before it is timed, as the loader rows are (a cold ceiling made them 4-13x it)
        assertTrue(r.out().contains("pread ceiling: 1 untimed warm-up pass, then 1 timed pass per round, as the loader's epochs"),
                r.toString());
    }

    @Test
    void aLoaderReadingBufferedIsComparedWithTheBufferedPreadCeilingNotTheODirectOne() {
        // no --no-direct: the ceiling reads with O_DIRECT, the loader's own policy reads this 1 MiB dataset buffered
        CommandRun r = CommandRun.execute(new RandomCommand(), "--paths", "HOST", "--threads", "2", "--batch-size", "64",
                "--json", data.toString());
        assertEquals(0, r.exitCode(), r.toString());
        List<String> rows = jsonLines(r);
        assertEquals(3, rows.size(), "O_DIRECT ceiling, buffered ceiling, HOST: " + r);
        assertEquals("\"pread\"", field(rows.get(0), "reader"), r.toString());
        assertEquals("\"O_DIRECT\"", field(rows.get(0), "io"), r.toString());
        assertEquals("\"pread\"", field(rows.get(1), "reader"), r.toString());
        assertEquals("\"buffered\"", field(rows.get(1), "io"), r.toString());
        assertEquals("1.00000", field(rows.get(1), "x_ceiling"), r.toString());
        String host = rows.get(2);
        assertEquals("\"buffered\"", field(host, "io"), r.toString());
        double ratio = Double.parseDouble(field(host, "gbps")) / Double.parseDouble(field(rows.get(1), "gbps"));
        assertEquals(ratio, Double.parseDouble(field(host, "x_ceiling")), ratio * 1e-3, r.toString());
        assertTrue(r.out().lines().anyMatch(l -> l.startsWith("pread, random, O_DIRECT ")), r.toString());
        assertTrue(r.out().lines().anyMatch(l -> l.startsWith("pread, random, buffered ")), r.toString());
        assertTrue(r.out().lines().anyMatch(l -> l.startsWith("loader HOST, global shuffle, buffered ")), r.toString());
        assertTrue(r.out().contains("note: x ceiling is over the pread ceiling read the same way"), r.toString());
    }

    @Test
    void withoutNoDirectTheLoaderKeepsItsOwnIoPolicy() {
        CommandRun r = CommandRun.execute(new RandomCommand(), "--paths", "HOST", "--threads", "2", "--no-ceiling", "--json",
                data.toString());
        assertEquals(0, r.exitCode(), r.toString());
        assertEquals("null", field(jsonLines(r).get(0), "direct"), r.toString());
        assertEquals(256, Integer.parseInt(field(jsonLines(r).get(0), "batch_records")), r.toString());
        assertTrue(r.out().contains("the loader's own I/O policy"), r.toString());
    }

    @Test
    void batchSizeAndBatchBytesTogetherAreRefusedBeforeAnyWork() {
        CommandRun r = CommandRun.execute(new RandomCommand(), "--paths", "HOST", "--batch-size", "8", "--batch-bytes", "1MiB",
                data.toString());
        OptionChecksTest.assertOneLineError(r, "gdsloader random", "--batch-size and --batch-bytes");
        assertEquals("", r.out(), r.toString());
        OptionChecksTest.assertOneLineError(CommandRun.execute(new RandomCommand(), "--rounds", "0", data.toString()),
                "gdsloader random", "--rounds");
    }

    @Test
    void hotWarmsThePageCacheFirstReadsBufferedAndSaysSo() {
        CommandRun r = CommandRun.execute(new RandomCommand(), "--paths", "HOST", "--threads", "2", "--hot", "--json",
                data.toString());
        assertEquals(0, r.exitCode(), r.toString());
        assertTrue(r.out().lines().anyMatch(l -> l.startsWith("page cache warmed: ") && l.contains("of 3 shards read once")),
                r.toString());
        assertTrue(r.out().contains(", hot, buffered reads,"), r.toString());
        List<String> rows = jsonLines(r);
        assertEquals(2, rows.size(), "pread ceiling and HOST; no gather ceiling without a GPU: " + r);
        for (String j : rows) {
            assertEquals("true", field(j, "hot"), j);
            assertEquals("false", field(j, "direct"), j);
            assertEquals("null", field(j, "x_gather"), j);
        }
        double cpu = Double.parseDouble(field(rows.get(1), "cpu_s_per_gb"));
        assertTrue(cpu > 0 && Double.isFinite(cpu), rows.get(1));
    }

    @Test
    void hotWithDropCachesIsRefusedBeforeAnyWork() {
        CommandRun r = CommandRun.execute(new RandomCommand(), "--paths", "HOST", "--hot", "--drop-caches", data.toString());
        OptionChecksTest.assertOneLineError(r, "gdsloader random", "--hot and --drop-caches");
        assertEquals("", r.out(), r.toString());
    }

    @Test
    void benchTakesAShuffleAndSeedAndChecksEveryBatchInThatOrder() {
        CommandRun r = CommandRun.execute(new BenchCommand(), "--paths", "HOST", "--shuffle", "shard-blocks", "--seed", "3",
                "--batch-bytes", "64KiB", "--threads", "2", "--io-size", "64KiB", data.toString());
        assertEquals(0, r.exitCode(), r.toString());
        assertTrue(r.out().contains("SHARD_BLOCKS shuffle, seed 3"), r.toString());
        assertTrue(r.out().lines().anyMatch(l -> l.startsWith("HOST ") && l.contains(" OK ")), r.toString());
        CommandRun global = CommandRun.execute(new BenchCommand(), "--paths", "HOST", "--shuffle", "GLOBAL",
                "--batch-bytes", "64KiB", "--threads", "2", "--io-size", "64KiB", data.toString());
        assertEquals(0, global.exitCode(), global.toString());
        assertTrue(global.out().contains("GLOBAL shuffle, seed 42"), global.toString());
        CommandRun bad = CommandRun.execute(new BenchCommand(), "--paths", "HOST", "--shuffle", "sideways", data.toString());
        assertEquals(2, bad.exitCode(), bad.toString());
        assertTrue(bad.err().contains("'sideways' is not a shuffle: use none, global or shard-blocks"), bad.toString());
        CommandRun seedAlone = CommandRun.execute(new BenchCommand(), "--paths", "HOST", "--seed", "5", data.toString());
        OptionChecksTest.assertOneLineError(seedAlone, "gdsloader bench", "--seed 5 given without --shuffle global or shard-blocks");
    }
}
