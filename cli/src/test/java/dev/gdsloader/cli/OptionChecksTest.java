package dev.gdsloader.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeFalse;

import dev.gdsloader.cuda.Cuda;
import dev.gdsloader.formats.npy.NpyShard;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Options, sizes and inputs are checked before any work starts; errors are one line naming the option or the
 * file, exit 2.
 */
class OptionChecksTest {
    @TempDir
    Path dir;

    private Path dataset(String name, String... extra) {
        Path d = dir.resolve(name);
        java.util.Map<String, String> opts = new java.util.LinkedHashMap<>(java.util.Map.of("--out", d.toString(),
                "--size", "512KiB", "--shards", "2", "--record-bytes", "4096"));
        for (int i = 0; i + 1 < extra.length; i += 2) {
            opts.put(extra[i], extra[i + 1]);
        }
        List<String> args = new java.util.ArrayList<>();
        opts.forEach((k, v) -> args.addAll(List.of(k, v)));
        CommandRun r = CommandRun.execute(new GenerateCommand(), args.toArray(String[]::new));
        assertEquals(0, r.exitCode(), r.toString());
        return d;
    }

    static void assertOneLineError(CommandRun r, String prefix, String... contains) {
        assertEquals(2, r.exitCode(), r.toString());
        assertEquals(1, r.err().lines().count(), r.toString());
        assertTrue(r.err().startsWith(prefix + ": "), r.toString());
        for (String c : contains) {
            assertTrue(r.err().contains(c), "wanted '" + c + "' in\n" + r);
        }
    }

    private static List<Path> children(Path d) throws IOException {
        try (Stream<Path> s = Files.list(d)) {
            return s.sorted().toList();
        }
    }

    // 1: free space, and validation before the output directory is created

    @Test
    void generateRefusesASizeBeyondTheFreeSpaceNamingSizeFreeSpaceAndDirectory() {
        Path out = dir.resolve("a").resolve("b");
        CommandRun r = CommandRun.execute(new GenerateCommand(), "--out", out.toString(), "--size", "900TiB");
        assertOneLineError(r, "gdsloader generate", "900.00 TiB", " free in " + dir);
        assertFalse(Files.exists(dir.resolve("a")), "nothing is created");
    }

    @Test
    void benchRefusesToGenerateMoreThanTheFreeSpace() throws IOException {
        CommandRun r = CommandRun.execute(new BenchCommand(), "--size", "900TiB", "--work-dir", dir.toString(), "--paths", "HOST");
        assertOneLineError(r, "gdsloader bench", "900.00 TiB", " free in " + dir);
        assertEquals(List.of(), children(dir), "no work directory is created");
        assertEquals("", r.out(), r.toString());
    }

    @Test
    void generateChecksItsOptionsBeforeCreatingTheOutputDirectory() {
        Path out = dir.resolve("gen");
        assertOneLineError(CommandRun.execute(new GenerateCommand(), "--out", out.toString(), "--shards", "0"),
                "gdsloader generate", "--shards");
        assertOneLineError(CommandRun.execute(new GenerateCommand(), "--out", out.toString(), "--size", "1000",
                "--record-bytes", "4096"), "gdsloader generate", "--size", "--record-bytes");
        assertOneLineError(CommandRun.execute(new GenerateCommand(), "--out", out.toString(), "--align", "100"),
                "gdsloader generate", "--align");
        assertFalse(Files.exists(out), "the output directory is not created for invalid options");
    }

    // 2: --align only where it is honoured

    @Test
    void alignIsRefusedForFormatsThatDoNotHonourItNamingTheFormat() {
        for (String format : List.of("safetensors", "arrow")) {
            Path out = dir.resolve(format);
            CommandRun r = CommandRun.execute(new GenerateCommand(), "--out", out.toString(), "--size", "1MiB",
                    "--record-bytes", "4096", "--format", format, "--align", "4096");
            assertOneLineError(r, "gdsloader generate", "--align", format);
            assertFalse(Files.exists(out), r.toString());
        }
        CommandRun help = CommandRun.execute(new GenerateCommand(), "--help");
        assertTrue(help.out().contains("npy only"), help.toString());
    }

    @Test
    void byteOptionsTakeUnitsAndAlignPlacesNpyDataOnTheBoundary() throws IOException {
        Path d = dataset("aligned", "--align", "4KiB", "--record-bytes", "4KiB");
        NpyShard s = NpyShard.open(d.resolve("data-00000.npy"));
        assertEquals(4096, s.recordBytes());
        assertEquals(0, s.dataOffset() % 4096, "data at " + s.dataOffset());
    }

    // 3: every option checked before any work, named as typed

    @Test
    void loaderFlagsAreCheckedByTheLoaderOptionsAndNamedAsTyped() {
        Path d = dataset("loaderflags");
        CommandRun depth = CommandRun.execute(new OverlapCommand(), "--depth", "65", d.toString());
        assertOneLineError(depth, "gdsloader overlap", "--depth 65", "prefetchDepth must be 1..64");
        CommandRun io = CommandRun.execute(new BenchCommand(), "--io-size", "6KiB", "--paths", "HOST", d.toString());
        assertOneLineError(io, "gdsloader bench", "--io-size 6144", "maxIoBytes must be a multiple of 4096");
        assertEquals("", io.out(), io.toString());
    }

    @Test
    void randomRejectsBadThreadsAndBatchSizeBeforePrintingAnything() {
        Path d = dataset("rnd");
        for (String bad : List.of("--threads=0", "--threads=-5")) {
            CommandRun r = CommandRun.execute(new RandomCommand(), bad, d.toString());
            assertOneLineError(r, "gdsloader random", "--threads");
            assertEquals("", r.out(), r.toString());
            assertFalse(r.err().contains("maximumPoolSize"), r.toString());
        }
        CommandRun r = CommandRun.execute(new RandomCommand(), "--batch-size=0", d.toString());
        assertOneLineError(r, "gdsloader random", "--batch-size");
        assertEquals("", r.out(), "rejected before the O_DIRECT ceiling phase\n" + r);
    }

    @Test
    void latencyRejectsANegativeEpochCount() {
        Path d = dataset("lat");
        CommandRun r = CommandRun.execute(new LatencyCommand(), "--epochs=-1", d.toString());
        assertOneLineError(r, "gdsloader latency", "--epochs");
        assertEquals("", r.out(), r.toString());
    }

    @Test
    void benchRejectsAGpuPathWithoutAGpuBeforeAnyPhase() {
        assumeFalse(Cuda.availability().available(), "CUDA is available here; this checks the no-GPU refusal");
        Path d = dataset("gpu");
        CommandRun r = CommandRun.execute(new BenchCommand(), "--paths=GDS", d.toString());
        assertOneLineError(r, "gdsloader bench", "--paths GDS");
        assertEquals("", r.out(), r.toString());
    }

    @Test
    void benchCapsBatchBytesLargerThanTheDatasetAndSaysSo() {
        Path d = dataset("cap");
        CommandRun r = CommandRun.execute(new BenchCommand(), "--batch-bytes=1TiB", "--paths", "HOST", "--io-size", "256KiB",
                d.toString());
        assertEquals(0, r.exitCode(), r.toString());
        assertTrue(r.out().contains("capped"), r.toString());
        assertTrue(r.out().contains("128 records per batch"), r.toString());
    }

    @Test
    void benchWithAnUnusableOutFailsBeforeRunning() throws IOException {
        Path file = Files.writeString(dir.resolve("a-file"), "x");
        CommandRun r = CommandRun.execute(new BenchCommand(), "--quick", "--paths", "HOST", "--work-dir", dir.toString(),
                "--out", file.resolve("sub").toString());
        assertOneLineError(r, "gdsloader bench", "--out", file.resolve("sub").toString());
        assertEquals("", r.out(), "nothing is generated or measured\n" + r);
    }

    @Test
    void sweepChecksEveryValueBeforeTheFirstRun() {
        Path d = dataset("sweep");
        CommandRun r = CommandRun.execute(new SweepCommand(), "--vary", "threads", "--values", "1,0", "--paths", "HOST",
                "--out", dir.resolve("rep").toString(), d.toString());
        assertOneLineError(r, "gdsloader sweep", "--threads");
        assertEquals("", r.out(), r.toString());
    }

    // 4: errors name the file, with the full command prefix, one line

    @Test
    void verifyNamesADatasetJsonThatIsADirectory() throws IOException {
        Path d = Files.createDirectories(dir.resolve("v").resolve("dataset.json")).getParent();
        assertOneLineError(CommandRun.execute(new VerifyCommand(), d.toString()), "gdsloader verify",
                d.resolve("dataset.json").toString());
    }

    @Test
    void convertIdxNamesADirectoryGivenAsInputWithTheFullCommandName() throws IOException {
        Path somedir = Files.createDirectories(dir.resolve("somedir"));
        CommandRun r = CommandRun.execute(GdsLoaderMain.class, "convert", "idx", "--out", dir.resolve("X").toString(),
                somedir.toString());
        assertOneLineError(r, "gdsloader convert idx", somedir + ": a directory");
        assertFalse(Files.exists(dir.resolve("X")), r.toString());
    }

    @Test
    void plotNamesABadJsonFileInOneLine() throws IOException {
        Path bad = Files.writeString(dir.resolve("bad.json"), "{\"reports\": {bad");
        CommandRun r = CommandRun.execute(new PlotCommand(), bad.toString());
        assertOneLineError(r, "gdsloader plot", bad + ": at byte offset 13: malformed JSON (line 1, column 14): ");
        assertFalse(r.err().contains("Source:") || r.err().contains("REDACTED"), "no Jackson source description: " + r);
        Path empty = Files.writeString(dir.resolve("empty.json"), "{}");
        assertOneLineError(CommandRun.execute(new PlotCommand(), empty.toString()), "gdsloader plot", empty
                + ": at byte offset 0: expected a report written by bench --out or sweep with a \"reports\" key, found keys []");
        Path noRows = Files.writeString(dir.resolve("norows.json"), "{\"command\": \"bench\", \"reports\": {\"bench\": {\"ceilingGbps\": 1}}}");
        assertOneLineError(CommandRun.execute(new PlotCommand(), noRows.toString()), "gdsloader plot", noRows
                + ": at byte offset 32: expected report 'bench' with a \"rows\" key");
        Path noReports = Files.writeString(dir.resolve("noreports.json"), "{\"reports\": {}}");
        assertOneLineError(CommandRun.execute(new PlotCommand(), noReports.toString()), "gdsloader plot", noReports
                + ": at byte offset 12: expected \"reports\" with at least one report");
        String row = "{\"requested\": \"HOST\", \"taken\": \"HOST\", \"minGbps\": 1, \"maxGbps\": 1, \"batches\": 1, "
                + "\"stallMillis\": 0, \"checksum\": \"OK\", \"ceilingRatio\": 1, \"cold\": false}";
        Path nullRows = Files.writeString(dir.resolve("nullrows.json"), "{\"reports\": {\"bench\": {\"ceilingGbps\": 1, \"rows\": null}}}");
        assertOneLineError(CommandRun.execute(new PlotCommand(), nullRows.toString()), "gdsloader plot", nullRows
                + ": at byte offset 12: expected report 'bench' with a non-empty \"rows\" list");
        Path noGbps = Files.writeString(dir.resolve("nogbps.json"), "{\"reports\": {\"bench\": {\"ceilingGbps\": 1, \"rows\": ["
                + row + "]}}}");
        CommandRun r2 = CommandRun.execute(new PlotCommand(), noGbps.toString());
        assertOneLineError(r2, "gdsloader plot", noGbps + ": at byte offset 12: expected row 0 of report 'bench' with "
                + "\"requested\" and \"taken\" paths and a \"gbps\" of at least 0");
        assertFalse(Files.exists(dir.resolve("nogbps.png")), "nothing drawn for a row without its GB/s");
    }

    @Test
    void plotNamesEveryBadReportInOneLineEachDrawsTheGoodOnesAndExitsTwo() throws IOException {
        Path good = dir.resolve("good");
        dev.gdsloader.bench.ReportWriter.write(new dev.gdsloader.bench.BenchReport(1000, 10, 1, 1.5, true, false,
                List.of(new dev.gdsloader.bench.BenchRow(dev.gdsloader.loader.path.ReadPath.HOST, dev.gdsloader.loader.path.PathTaken.HOST,
                        1.2, 1.2, 1.2, 4, 0.5, "OK", 0.8, false)), List.of()), "gdsloader bench", good);
        Files.delete(good.resolve("bench.png"));
        Path bad = Files.writeString(dir.resolve("bad.json"), "{\"reports\": {bad");
        Path missing = dir.resolve("missing.json");
        Path second = Files.copy(good.resolve("bench.json"), dir.resolve("second.json"));
        CommandRun r = CommandRun.execute(new PlotCommand(), bad.toString(), good.resolve("bench.json").toString(),
                missing.toString(), second.toString());
        assertEquals(2, r.exitCode(), r.toString());
        List<String> errors = r.err().lines().toList();
        assertEquals(2, errors.size(), "one line per bad report: " + r);
        assertTrue(errors.get(0).startsWith("gdsloader plot: " + bad + ": "), r.toString());
        assertTrue(errors.get(1).startsWith("gdsloader plot: ") && errors.get(1).contains(missing.toString()), r.toString());
        assertTrue(Files.size(good.resolve("bench.png")) > 0, "the good report before the bad ones is drawn: " + r);
        assertTrue(Files.size(dir.resolve("second.png")) > 0, "the good report after the bad ones is drawn: " + r);
        assertEquals(List.of("wrote " + good.resolve("bench.png"), "wrote " + dir.resolve("second.png")), r.out().lines().toList());
    }

    // 5: verify compares dtype and record shape; plurals

    @Test
    void verifyComparesDtypeAndRecordShapeWithTheManifest() throws IOException {
        Path d = dataset("dt");
        Path json = d.resolve("dataset.json");
        String orig = Files.readString(json);
        Files.writeString(json, orig.replace("\"U8\"", "\"I8\""));
        CommandRun r = CommandRun.execute(new VerifyCommand(), d.toString());
        assertEquals(1, r.exitCode(), r.toString());
        assertTrue(r.out().contains("holds UINT8 records") && r.out().contains("the manifest lists INT8"), r.toString());
        assertTrue(r.out().contains("2 shards, 2 mismatches"), r.toString());
        Files.writeString(json, orig.replace("[4096]", "[64,64]"));
        CommandRun shape = CommandRun.execute(new VerifyCommand(), d.toString());
        assertEquals(1, shape.exitCode(), shape.toString());
        assertTrue(shape.out().contains("[64, 64]"), shape.toString());
        Files.writeString(json, orig);
        assertEquals(0, CommandRun.execute(new VerifyCommand(), d.toString()).exitCode());
    }

    @Test
    void verifySaysOneShardAndOneMismatchInTheSingular() throws IOException {
        Path d = dataset("one", "--shards", "1");
        Path shard = d.resolve("data-00000.npy");
        byte[] b = Files.readAllBytes(shard);
        b[b.length - 1] ^= 1;
        Files.write(shard, b);
        CommandRun r = CommandRun.execute(new VerifyCommand(), d.toString());
        assertEquals(1, r.exitCode(), r.toString());
        assertTrue(r.out().contains("1 shard, 1 mismatch\n") || r.out().endsWith("1 shard, 1 mismatch" + System.lineSeparator()),
                r.toString());
    }

    // 6: help texts say what the commands do

    @Test
    void helpTextsNameEveryFormat() {
        String gen = CommandRun.execute(new GenerateCommand(), "--help").out();
        assertFalse(gen.contains("uint8 .npy shards"), gen);
        assertFalse(gen.contains("data-*.npy"), gen);
        assertTrue(gen.contains(".safetensors") && gen.contains(".arrow"), gen);
        String convert = CommandRun.execute(new ConvertCommand(), "--help").out();
        assertFalse(convert.contains("into .npy shards"), convert);
        String bench = CommandRun.execute(new BenchCommand(), "--help").out();
        assertFalse(bench.contains("directory of .npy shards"), bench);
        String inspect = CommandRun.execute(new InspectCommand(), "--help").out();
        assertTrue(inspect.contains(".arrows") && inspect.contains(".npz"), inspect);
    }

    // a new user's small ones

    @Test
    void aPathNamedTwiceIsRefusedByBenchAndRandomBeforeAnyWork() {
        Path d = dataset("twice");
        for (Object command : List.of(new BenchCommand(), new RandomCommand())) {
            CommandRun r = CommandRun.execute(command, "--paths", "HOST,HOST", d.toString());
            assertOneLineError(r, "gdsloader " + (command instanceof BenchCommand ? "bench" : "random"),
                    "--paths names HOST twice: give each path once");
            assertEquals("", r.out(), r.toString());
        }
    }

    @Test
    void latencyEpochsAreCappedLikeRounds() {
        Path d = dataset("epochs");
        assertOneLineError(CommandRun.execute(new LatencyCommand(), "--epochs", "1001", d.toString()), "gdsloader latency",
                "--epochs must be 1..1000, got 1001");
    }

    @Test
    void generateRefusesAlignForRawAsForSafetensorsAndArrow() {
        CommandRun r = CommandRun.execute(new GenerateCommand(), "--out", dir.resolve("raw").toString(), "--size", "64KiB",
                "--record-bytes", "4096", "--shards", "1", "--format", "raw", "--align", "4096");
        assertOneLineError(r, "gdsloader generate", "--align is not honoured by --format raw");
        assertFalse(Files.exists(dir.resolve("raw").resolve("data-00000.bin")), r.toString());
    }

    @Test
    void inspectGoesOnPastABadFileReportsEachAndExitsTwoAtTheEnd() throws IOException {
        Path d = dataset("insp");
        Path good = d.resolve("data-00000.npy");
        Path bad = Files.writeString(dir.resolve("bad.npy"), "not npy");
        Path missing = dir.resolve("missing.npy");
        CommandRun r = CommandRun.execute(new InspectCommand(), bad.toString(), good.toString(), missing.toString());
        assertEquals(2, r.exitCode(), r.toString());
        assertTrue(r.out().contains(good + "\n") && r.out().contains("records"), "the good file is inspected: " + r);
        List<String> errors = r.err().lines().toList();
        assertEquals(2, errors.size(), r.toString());
        assertTrue(errors.get(0).startsWith("gdsloader inspect: " + bad + ": "), r.toString());
        assertTrue(errors.get(1).startsWith("gdsloader inspect: " + missing + ": no such file"), r.toString());
    }

    @Test
    void aNumberPastTheOptionsTypeNamesTheOptionsRealRange() {
        Path d = dataset("range");
        CommandRun bench = CommandRun.execute(GdsLoaderMain.class, "bench", "--threads", "99999999999", d.toString());
        assertEquals(2, bench.exitCode(), bench.toString());
        assertTrue(bench.err().startsWith("gdsloader bench: --threads: '99999999999' is out of range: must be 1..256\n"),
                bench.toString());
        CommandRun random = CommandRun.execute(GdsLoaderMain.class, "random", "--rounds", "x", d.toString());
        assertTrue(random.err().startsWith("gdsloader random: --rounds: 'x' is not a whole number in 1..1000\n"), random.toString());
        CommandRun latency = CommandRun.execute(GdsLoaderMain.class, "latency", "--batch-size", "-99999999999", d.toString());
        assertTrue(latency.err().startsWith("gdsloader latency: --batch-size: '-99999999999' is out of range: must be 1..2147483647\n"),
                latency.toString());
        CommandRun depth = CommandRun.execute(GdsLoaderMain.class, "sweep", "--depth", "99999999999", d.toString());
        assertTrue(depth.err().contains("--depth: '99999999999' is out of range: must be 1..64"), depth.toString());
        CommandRun randomDepth = CommandRun.execute(GdsLoaderMain.class, "random", "--depth", "abc", d.toString());
        assertTrue(randomDepth.err().startsWith("gdsloader random: --depth: 'abc' is not a whole number in 1..64\n"),
                randomDepth.toString());
        CommandRun sized = CommandRun.execute(GdsLoaderMain.class, "bench", d.toString(), "--size", "0");
        assertEquals(2, sized.exitCode(), sized.toString());
        assertTrue(sized.err().startsWith("gdsloader bench: --size: sets the data bench generates when no DIR is given"), sized.toString());
        String[][] more = { // declared after a new user's trial: these showed the int type's range
            {"bench", "--rounds", "99999999999", d.toString(), "gdsloader bench: --rounds: '99999999999' is out of range: must be 1..1000"},
            {"generate", "--out", d.resolve("g").toString(), "--shards", "99999999999",
                "gdsloader generate: --shards: '99999999999' is out of range: must be 1..2147483647"},
            {"serve", d.toString(), "--port", "99999999999", "gdsloader serve: --port: '99999999999' is out of range: must be 0..65535"},
            {"serve", d.toString(), "--idle-timeout", "99999999999",
                "gdsloader serve: --idle-timeout: '99999999999' is out of range: must be 1..2147483647 seconds"},
            {"serve-bench", d.toString(), "--prefetch-depth", "99999999999",
                "gdsloader serve-bench: --prefetch-depth: '99999999999' is out of range: must be 1..64"},
        };
        for (String[] c : more) {
            CommandRun r = CommandRun.execute(GdsLoaderMain.class, java.util.Arrays.copyOf(c, c.length - 1));
            assertEquals(2, r.exitCode(), r.toString());
            assertTrue(r.err().startsWith(c[c.length - 1] + "\n"), r.toString());
        }
    }
}
