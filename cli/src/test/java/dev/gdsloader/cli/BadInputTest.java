package dev.gdsloader.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import dev.gdsloader.formats.DType;
import dev.gdsloader.formats.npy.NpyWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.function.Supplier;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A new user's bad input, given to the commands in this JVM against real files: a FIFO where {@code dataset.json} or a
 * report should be (a real one, made with {@code mkfifo}; opening it for reading would block forever), batch sizes
 * larger than the dataset, and a dataset of no records. Every command finishes within its timeout, so a regression
 * fails here instead of hanging the build.
 */
class BadInputTest {
    @TempDir
    Path dir;

    private final List<Path> fifos = new java.util.ArrayList<>();

    private Path fifo(Path path) throws Exception {
        Files.createDirectories(path.getParent());
        int rc = new ProcessBuilder("mkfifo", path.toString()).start().waitFor();
        assumeTrue(rc == 0 && Files.exists(path), "mkfifo is not available");
        fifos.add(path);
        return path;
    }

    /**
     * Releases a reader that a regression left blocked in a FIFO's open: opening it read-write never blocks (Linux) and
     * counts as a writer, so the blocked open returns, and the reader sees the end of the file once this closes. Without
     * it the stuck thread would hold {@link CommandRun}'s lock and every later test would time out too.
     */
    @AfterEach
    void releaseBlockedReaders() throws Exception {
        for (Path f : fifos) {
            new java.io.RandomAccessFile(f.toFile(), "rw").close();
        }
    }

    private static CommandRun within(Supplier<CommandRun> run) {
        return assertTimeoutPreemptively(Duration.ofSeconds(30), run::get);
    }

    /** {@code <name>-00000.npy} of {@code records} records of 4 uint8 each (values {@code i % 251}). */
    private Path npyDataset(String name, long records) throws Exception {
        Path d = Files.createDirectories(dir.resolve(name));
        byte[] data = new byte[(int) records * 4];
        for (int i = 0; i < data.length; i++) {
            data[i] = (byte) (i % 251);
        }
        NpyWriter.write(d.resolve("x-00000.npy"), DType.UINT8, new long[] {records, 4}, data);
        return d;
    }

    @Test
    void aFifoNamedDatasetJsonIsRefusedByChecksumBenchAndLatencyInsteadOfHanging() throws Exception {
        Path data = npyDataset("fifo-manifest", 12);
        Path manifest = fifo(data.resolve("dataset.json"));
        String expected = manifest + ": not a regular file (a FIFO, socket or device): a dataset manifest must be a regular file";
        for (var run : List.<Supplier<CommandRun>>of(
                () -> CommandRun.execute(new ChecksumCommand(), data.toString(), "--path", "HOST"),
                () -> CommandRun.execute(new BenchCommand(), data.toString(), "--paths", "HOST", "--threads", "2"),
                () -> CommandRun.execute(new LatencyCommand(), data.toString(), "--path", "HOST"))) {
            CommandRun r = within(run);
            assertEquals(2, r.exitCode(), r.toString());
            assertTrue(r.err().contains(expected), r.toString());
        }
    }

    @Test
    void inspectNamesAMissingFileMissingWhateverItsSuffixAndGoesOnToTheNext() throws Exception {
        Path good = npyDataset("present", 3).resolve("x-00000.npy");
        Path bare = dir.resolve("nonexistent");
        Path npy = dir.resolve("nonexistent.npy");
        CommandRun r = within(() -> CommandRun.execute(new InspectCommand(), bare.toString(), npy.toString(), good.toString()));
        assertEquals(2, r.exitCode(), r.toString());
        assertTrue(r.err().contains(bare + ": no such file or directory"), r.toString());
        assertTrue(r.err().contains(npy + ": no such file or directory"), r.toString());
        assertTrue(r.out().contains("3 of UINT8[4]"), r.toString());
    }

    @Test
    void aShardThatIsASymbolicLinkLoopIsNamedALoopByChecksumBenchAndInspect() throws Exception {
        Path data = npyDataset("looped", 12);
        Path loop = Files.createSymbolicLink(data.resolve("y-00000.npy"), Path.of("y-00000.npy"));
        String expected = loop + ": not a regular file (a symbolic link loop): shards must be regular files";
        for (var run : List.<Supplier<CommandRun>>of(
                () -> CommandRun.execute(new ChecksumCommand(), data.toString(), "--path", "HOST"),
                () -> CommandRun.execute(new BenchCommand(), data.toString(), "--paths", "HOST", "--threads", "2"),
                () -> CommandRun.execute(new InspectCommand(), loop.toString()))) {
            CommandRun r = within(run);
            assertEquals(2, r.exitCode(), r.toString());
            assertTrue(r.err().contains(expected), r.toString());
        }
    }

    @Test
    void plotRefusesAFifoInsteadOfHanging() throws Exception {
        Path report = fifo(dir.resolve("reports").resolve("bench.json"));
        CommandRun r = within(() -> CommandRun.execute(new PlotCommand(), report.toString()));
        assertEquals(2, r.exitCode(), r.toString());
        assertTrue(r.err().contains(report + ": not a regular file (a FIFO, socket or device): a report must be a regular file"),
                r.toString());
    }

    @Test
    void latencyCapsItsBatchAtTheDatasetsRecords() throws Exception {
        Path data = npyDataset("small", 12);
        CommandRun r = within(() -> CommandRun.execute(new LatencyCommand(), data.toString(), "--path", "HOST",
                "--batch-size", "445", "--epochs", "1", "--no-direct"));
        assertEquals(0, r.exitCode(), r.toString());
        assertTrue(r.out().contains("note: a batch of 445 records is more than the dataset's 12; each batch is capped at all "
                + "of its records"), r.toString());
        assertTrue(r.out().contains("path HOST, 12 records per batch"), r.toString());
    }

    @Test
    void sweepCapsItsBatchAtTheDatasetsRecords() throws Exception {
        Path data = npyDataset("small", 12);
        Path out = Files.createDirectories(dir.resolve("out"));
        CommandRun r = within(() -> CommandRun.execute(new SweepCommand(), data.toString(), "--vary", "threads",
                "--values", "1", "--paths", "HOST", "--no-direct", "--out", out.toString()));
        assertEquals(0, r.exitCode(), r.toString());
        assertTrue(r.out().contains(", 12 records per batch,"), r.toString());
        assertTrue(r.out().contains("note: a batch of 16777216 records is more than the dataset's 12; each batch is capped "
                + "at 12 records"), r.toString());
    }

    @Test
    void anEmptyDatasetIsRefusedByLatencySweepAndRandomWithAClearMessage() throws Exception {
        Path data = npyDataset("empty", 0);
        String expected = data + ": the dataset holds no records (its columns [x] have 0 records each): nothing to measure";
        CommandRun latency = within(() -> CommandRun.execute(new LatencyCommand(), data.toString(), "--path", "HOST"));
        assertEquals(2, latency.exitCode(), latency.toString());
        assertTrue(latency.err().contains(expected), latency.toString());
        Path out = Files.createDirectories(dir.resolve("out"));
        CommandRun sweep = within(() -> CommandRun.execute(new SweepCommand(), data.toString(), "--vary", "depth",
                "--values", "2", "--paths", "HOST", "--out", out.toString()));
        assertEquals(2, sweep.exitCode(), sweep.toString());
        assertTrue(sweep.err().contains(expected), sweep.toString());
        CommandRun random = within(() -> CommandRun.execute(new RandomCommand(), data.toString(), "--paths", "HOST",
                "--no-ceiling"));
        assertEquals(2, random.exitCode(), random.toString());
        assertTrue(random.err().contains(expected), random.toString());
        assertTrue(random.out().lines().noneMatch(l -> l.contains("NaN")), "no rows of NaN: " + random);
    }
}
