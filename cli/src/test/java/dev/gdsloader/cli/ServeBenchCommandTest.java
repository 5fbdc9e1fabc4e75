package dev.gdsloader.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.gdsloader.cuda.Cuda;
import dev.gdsloader.loader.dataset.Dataset;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code gdsloader serve-bench} on the host path over a small generated dataset (a real server on loopback, real
 * clients, a real loopback socket copy): every row but the GPU ones is measured, with the byte and record counts the
 * dataset implies; without a GPU the CUDA IPC rows say why they were skipped; the Python row says how to ask for it.
 */
@Timeout(120)
class ServeBenchCommandTest {
    @TempDir
    Path dir;

    @Test
    void measuresEveryHostRowOfASmallDatasetAndSaysWhyTheGpuRowsAreSkipped() throws Exception {
        Path data = generate("bench", "4MiB", "3");
        Dataset d = Dataset.open(data);
        long dataBytes = d.dataBytes();
        long records = d.recordCount();
        Path out = Files.createDirectories(dir.resolve("out"));
        CommandRun run = CommandRun.execute(new ServeBenchCommand(), data.toString(), "--clients", "1,4", "--epochs", "2",
                "--batch-size", "16", "--json", "--out", out.toString());
        assertEquals(0, run.exitCode(), run.toString());
        JsonNode report = new ObjectMapper().readTree(Files.readString(out.resolve("serve-bench.json")));
        String lastLine = run.out().strip().lines().reduce((a, b) -> b).orElseThrow();
        assertEquals(report, new ObjectMapper().readTree(lastLine), "--json prints the report written to --out");
        Map<String, JsonNode> rows = new HashMap<>();
        report.path("rows").forEach(r -> rows.put(r.path("id").asText(), r));
        assertEquals(java.util.Set.of("loopback", "host-1", "host-4", "ipc-in-process", "ipc", "python"), rows.keySet(), run.toString());

        JsonNode one = rows.get("host-1");
        assertEquals(2 * dataBytes, one.path("bytes").asLong(), "host-1 reads the dataset's bytes in each of 2 epochs");
        assertEquals(2 * records, one.path("records").asLong());
        assertTrue(one.path("gbps").asDouble() > 0, one.toString());
        JsonNode loop = rows.get("loopback");
        assertEquals(one.path("bytes").asLong(), loop.path("bytes").asLong(), "the ceiling moves as many bytes as host-1");
        assertTrue(loop.path("gbps").asDouble() > 0, loop.toString());
        assertEquals(one.path("gbps").asDouble() / loop.path("gbps").asDouble(), one.path("ratio").asDouble(), 1e-9);
        assertEquals("loopback", one.path("ratioTo").asText());
        JsonNode four = rows.get("host-4");
        assertEquals(2 * dataBytes, four.path("bytes").asLong(), "4 ranks read the dataset once per epoch together");
        assertEquals(2 * records, four.path("records").asLong());
        assertEquals(four.path("gbps").asDouble() / one.path("gbps").asDouble(), four.path("ratio").asDouble(), 1e-9);
        for (String id : new String[] {"loopback", "host-1", "host-4"}) {
            assertTrue(rows.get(id).path("skipped").isNull(), id + " measured");
            assertTrue(run.out().lines().anyMatch(l -> l.startsWith(id + " ") && !l.contains("skipped")), id + " printed:\n" + run.out());
        }
        if (!Cuda.availability().available()) {
            for (String id : new String[] {"ipc-in-process", "ipc"}) {
                assertTrue(rows.get(id).path("skipped").asText().startsWith("no GPU: "), rows.get(id).toString());
                assertTrue(run.out().lines().anyMatch(l -> l.startsWith(id + " ") && l.contains("skipped: no GPU: ")), run.out());
            }
        }
        assertTrue(rows.get("python").path("skipped").asText().contains("--python 'python3 clients/python/tests/bench_host.py'"),
                rows.get("python").toString());
        assertEquals(">= 0.5", one.path("acceptance").asText());
        assertEquals(">= 2", four.path("acceptance").asText());
        // the acceptance line, last before the --json line, agrees with the JSON's count
        List<String> printed = run.out().strip().lines().toList();
        long below = java.util.stream.Stream.of("host-1", "host-4").filter(id -> rows.get(id).path("ratio").asDouble()
                < Double.parseDouble(rows.get(id).path("acceptance").asText().substring(3))).count();
        assertEquals(below, report.path("belowAcceptance").asLong(), report.toString());
        assertEquals(below, report.path("belowAcceptanceRows").size(), report.toString());
        assertTrue(printed.get(printed.size() - 2).startsWith("serve-bench: " + below + " of 2 rows below acceptance"), run.toString());
    }

    /**
     * {@code --python CMD}: the command runs as a child with {@code --data DATA --location grpc://127.0.0.1:PORT
     * --batch-size B --epochs E --no-raw} while the bench's server listens there, and its {@code BENCH_JSON} line
     * becomes the python row (ratio to host-1). pyarrow is not on the build machine, so CMD here is a stdlib stand-in
     * for clients/python/tests/bench_host.py that checks its arguments and connects to the port; the real script runs
     * on the GPU machine (benchmarks/device/service.sh). A child that fails is reported with its status and last lines.
     */
    @Test
    @SuppressWarnings("StringConcatToTextBlock") // one string per line of the stand-in script, no trailing newline
    void thePythonCommandRunsAgainstTheSameServerAndItsJsonLineBecomesARow() throws Exception {
        assumeTrue(onPath("python3"), "python3 is not on PATH");
        Path data = dir.resolve("data").resolve("bench");
        assertEquals(0, CommandRun.execute(new GenerateCommand(), "--out", data.toString(), "--size", "1MiB",
                "--shards", "2", "--record-bytes", "4KiB").exitCode());
        Path script = dir.resolve("standin.py");
        Files.writeString(script, String.join("\n",
                "import argparse, json, socket, sys",
                "ap = argparse.ArgumentParser()",
                "for a in ('--data', '--location', '--batch-size', '--epochs'): ap.add_argument(a, required=True)",
                "ap.add_argument('--no-raw', action='store_true', required=True)",
                "ap.add_argument('--fail', action='store_true')",
                "a = ap.parse_args()",
                "host, port = a.location[len('grpc://'):].rsplit(':', 1)",
                "socket.create_connection((host, int(port)), timeout=10).close()",
                "print('connected to', a.location, 'for', a.data)",
                "if a.fail: print('it broke'); sys.exit(3)",
                "print('BENCH_JSON ' + json.dumps({'GBps': 0.05, 'records_per_s': 1234.5, 'batch': int(a.batch_size), 'epochs': int(a.epochs)}))",
                ""));
        Path out = Files.createDirectories(dir.resolve("py"));
        CommandRun run = CommandRun.execute(new ServeBenchCommand(), data.toString(), "--clients", "1", "--epochs", "1",
                "--batch-size", "8", "--python", "python3 " + script, "--out", out.toString());
        assertEquals(0, run.exitCode(), run.toString());
        assertTrue(run.out().contains("connected to grpc://127.0.0.1:"), run.out());
        Map<String, JsonNode> rows = new HashMap<>();
        new ObjectMapper().readTree(Files.readString(out.resolve("serve-bench.json"))).path("rows")
                .forEach(r -> rows.put(r.path("id").asText(), r));
        JsonNode py = rows.get("python");
        assertTrue(py.path("skipped").isNull(), py.toString());
        assertEquals(0.05, py.path("gbps").asDouble(), 1e-12);
        assertEquals(1234.5, py.path("recordsPerSecond").asDouble(), 1e-9);
        assertEquals(0.05 / rows.get("host-1").path("gbps").asDouble(), py.path("ratio").asDouble(), 1e-9);

        CommandRun failed = CommandRun.execute(new ServeBenchCommand(), data.toString(), "--clients", "1", "--epochs", "1",
                "--batch-size", "8", "--python", "python3 " + script + " --fail");
        assertEquals(2, failed.exitCode(), failed.toString());
        assertTrue(failed.err().contains("the Python client exited with status 3 without a 'BENCH_JSON' line")
                && failed.err().contains("it broke"), failed.toString());
    }

    @Test
    void ipcEpochsOutOfRangeIsRefusedNamingTheOption() {
        CommandRun r = CommandRun.execute(new ServeBenchCommand(), dir.toString(), "--ipc-epochs", "0");
        OptionChecksTest.assertOneLineError(r, "gdsloader serve-bench", "--ipc-epochs");
    }

    @Test
    void aMemoryBudgetOfZeroIsRefusedNamingTheOptionBeforeTheServerStarts() {
        Path data = generate("budget", "64KiB", "1");
        CommandRun r = CommandRun.execute(new ServeBenchCommand(), data.toString(), "--memory-budget", "0");
        OptionChecksTest.assertOneLineError(r, "gdsloader serve-bench", "--memory-budget must be 1..");
        assertTrue(r.out().isEmpty(), r.toString()); // no server, no row
    }

    /** A new user's {@code --memory-budget 9PiB} was taken: it is refused as serve refuses it, in the same words. */
    @Test
    void aMemoryBudgetAboveThePhysicalMemoryIsRefusedAsServeRefusesIt() {
        Path data = generate("huge", "64KiB", "1");
        long physical = dev.gdsloader.memory.NativeAllocator.hostMemoryBytes();
        CommandRun r = org.junit.jupiter.api.Assertions.assertTimeoutPreemptively(java.time.Duration.ofSeconds(60),
                () -> CommandRun.execute(new ServeBenchCommand(), data.toString(), "--memory-budget", "9PiB", "--clients", "1",
                        "--epochs", "1"));
        assertEquals("gdsloader serve-bench: --memory-budget 9.00 PiB (" + (9L << 50) + " B) is more than this machine's physical "
                + "memory, " + ByteSize.format(physical) + " (" + physical + " B): the budget bounds the sessions' host memory too "
                + "(host and device each)", r.err().strip(), r.toString());
        assertEquals(2, r.exitCode(), r.toString());
        assertTrue(r.out().isEmpty(), r.toString()); // no server, no row
        CommandRun serve = CommandRun.execute(new ServeCommand(), dir.toString(), "--memory-budget", "9PiB");
        assertEquals(r.err().strip().substring("gdsloader serve-bench".length()), serve.err().strip().substring("gdsloader serve"
                .length()), "serve and serve-bench refuse it in the same words");
    }

    /** Without {@code --memory-budget} serve-bench gives its server 16 GiB, or the physical memory where that is less. */
    @Test
    void theDefaultMemoryBudgetIsSixteenGibibytesOrThePhysicalMemoryIfLess() {
        assertEquals(16L << 30, ServeBenchCommand.defaultMemoryBudget(2L << 40));
        assertEquals(16L << 30, ServeBenchCommand.defaultMemoryBudget(16L << 30));
        assertEquals(8L << 30, ServeBenchCommand.defaultMemoryBudget(8L << 30));
    }

    /** A new user's {@code --clients 1,1} ran one host-1 row without a word: a repeated count is refused naming it. */
    @Test
    void aRepeatedClientCountIsRefusedNamingIt() {
        Path data = generate("twice", "64KiB", "1");
        String[][] cases = {{"1,1", "1"}, {"4,1,4", "4"}, {"1,2,3,2,3", "2"}};
        for (String[] c : cases) {
            CommandRun r = org.junit.jupiter.api.Assertions.assertTimeoutPreemptively(java.time.Duration.ofSeconds(60),
                    () -> CommandRun.execute(new ServeBenchCommand(), data.toString(), "--clients", c[0], "--epochs", "1"));
            assertEquals("gdsloader serve-bench: --clients: " + c[1] + " is given twice (" + c[0] + "); each count is one row",
                    r.err().strip(), r.toString());
            assertEquals(2, r.exitCode(), r.toString());
            assertTrue(r.out().isEmpty(), r.toString()); // no server, no row
        }
    }

    /**
     * A new user's {@code --clients 1,4} over 1 record ran the loopback and host-1 rows before the 4-client row failed:
     * every count is checked against the dataset first, in one line naming --clients, the count and the records.
     */
    @Test
    void aClientCountTheDatasetCannotGiveEveryRankABatchIsRefusedBeforeAnyRow() {
        Path data = dir.resolve("data").resolve("one");
        CommandRun gen = CommandRun.execute(new GenerateCommand(), "--out", data.toString(), "--size", "4KiB",
                "--shards", "1", "--record-bytes", "4KiB");
        assertEquals(0, gen.exitCode(), gen.toString());
        CommandRun r = org.junit.jupiter.api.Assertions.assertTimeoutPreemptively(java.time.Duration.ofSeconds(60),
                () -> CommandRun.execute(new ServeBenchCommand(), data.toString(), "--clients", "1,4", "--epochs", "1"));
        OptionChecksTest.assertOneLineError(r, "gdsloader serve-bench", "--clients 4: rank 1 of 4 would get no batch: 1 records over 4 ranks");
        assertTrue(r.out().isEmpty(), r.toString()); // no server, no row
    }

    /** serve-bench's own options name their ranges as the rest of the CLI does, not Java's or the loader's terms. */
    @Test
    void deviceAndPrefetchDepthAreRefusedNamingTheirRanges() {
        Path data = generate("ranges", "64KiB", "1");
        String[][] cases = {
            {"--device", "-1", "gdsloader serve-bench: --device must be 0..2147483647, got -1"},
            {"--device", "99999999999", "gdsloader serve-bench: --device: '99999999999' is out of range: must be 0..2147483647"},
            {"--prefetch-depth", "0", "gdsloader serve-bench: --prefetch-depth must be 1..64, got 0"},
            {"--prefetch-depth", "65", "gdsloader serve-bench: --prefetch-depth must be 1..64, got 65"},
            {"--memory-budget", "-1", "gdsloader serve-bench: --memory-budget must be 1.."
                + dev.gdsloader.memory.NativeAllocator.hostMemoryBytes() + " bytes, got -1"},
        };
        for (String[] c : cases) {
            CommandRun r = CommandRun.execute(new ServeBenchCommand(), data.toString(), c[0], c[1], "--clients", "1", "--epochs", "1");
            assertEquals(2, r.exitCode(), r.toString());
            assertTrue(r.err().startsWith(c[2] + "\n"), "wanted '" + c[2] + "' in\n" + r);
            assertTrue(r.out().isEmpty(), r.toString());
        }
    }

    /** A dataset whose parent is a system directory (here: reached through a link to {@code /}, as {@code /data} would be). */
    @Test
    void aDatasetWhoseParentIsASystemDirectoryIsRefusedSayingWhatToDoNotNamingServesFlag() throws Exception {
        Path link = Files.createSymbolicLink(dir.resolve("slash"), Path.of("/"));
        CommandRun r = CommandRun.execute(new ServeBenchCommand(), link.resolve("etc").toString(), "--clients", "1");
        OptionChecksTest.assertOneLineError(r, "gdsloader serve-bench", "serve-bench serves the dataset's parent directory",
                "is a system directory", "move the dataset into a directory of datasets");
        assertFalse(r.err().contains("--allow-system-root"), r.toString()); // serve's flag, not serve-bench's
    }

    private static boolean onPath(String program) {
        for (String d : System.getenv().getOrDefault("PATH", "").split(java.io.File.pathSeparator, -1)) {
            if (!d.isEmpty() && Files.isExecutable(Path.of(d, program))) {
                return true;
            }
        }
        return false;
    }

    /** {@code gdsloader generate} of 4 KiB records into {@code dir/data/NAME}. */
    private Path generate(String name, String size, String shards) {
        Path data = dir.resolve("data").resolve(name);
        CommandRun gen = CommandRun.execute(new GenerateCommand(), "--out", data.toString(), "--size", size,
                "--shards", shards, "--record-bytes", "4KiB");
        assertEquals(0, gen.exitCode(), gen.toString());
        return data;
    }

    /** The default {@code --clients 1,32} exceeds the service's default 16 sessions per client address: the bench's own server admits them. */
    @Test
    void moreClientsThanTheDefaultSessionsPerClientAreMeasured() throws Exception {
        Path data = generate("many", "1MiB", "2");
        int many = dev.gdsloader.service.server.ServerLimits.defaults().sessionsPerClient() + 1;
        CommandRun run = CommandRun.execute(new ServeBenchCommand(), data.toString(), "--clients", String.valueOf(many),
                "--epochs", "1", "--batch-size", "8", "--out", dir.resolve("out-many").toString());
        assertEquals(0, run.exitCode(), run.toString());
        assertTrue(run.out().contains("host-" + many), run.toString());
    }

    @Test
    void aDatasetWithoutShardsOrRecordsIsRefusedInOneLineBeforeTheServerStarts() throws Exception {
        Path empty = Files.createDirectories(dir.resolve("empty"));
        CommandRun none = CommandRun.execute(new ServeBenchCommand(), empty.toString());
        assertEquals(2, none.exitCode(), none.toString());
        assertTrue(none.err().startsWith("gdsloader serve-bench: " + empty + ": no .npy"), none.toString());
        assertFalse(none.out().contains("serving"), none.toString());
        Path zero = Files.createDirectories(dir.resolve("zero"));
        dev.gdsloader.formats.npy.NpyWriter.write(zero.resolve("x-00000.npy"), dev.gdsloader.formats.DType.UINT8, new long[] {0, 4}, new byte[0]);
        CommandRun run = CommandRun.execute(new ServeBenchCommand(), zero.toString());
        assertEquals(2, run.exitCode(), run.toString());
        assertEquals("gdsloader serve-bench: " + zero + ": the dataset holds no records (its columns [x] have 0 records each): "
                + "nothing to measure", run.err().strip(), run.toString());
    }

    @Test
    void aPythonProgramThatCannotRunIsRefusedBeforeTheServerStarts() throws Exception {
        Path data = generate("py", "1MiB", "2");
        for (String program : new String[] {"/nonexistent/python3", "no-such-program-gdsloader", dir.toString()}) {
            CommandRun run = CommandRun.execute(new ServeBenchCommand(), data.toString(), "--python", program + " bench.py");
            assertEquals(2, run.exitCode(), run.toString());
            assertEquals("gdsloader serve-bench: --python: '" + program + "' is not an executable file nor a program on PATH",
                    run.err().strip(), run.toString());
            assertFalse(run.out().contains("serving"), run.toString());
        }
    }

    @Test
    void aMissingDatasetDirectoryAndContradictoryReadFlagsAreRefusedInOneLine() {
        CommandRun run = CommandRun.execute(new ServeBenchCommand(), dir.resolve("nope").toString());
        assertEquals(2, run.exitCode(), run.toString());
        assertTrue(run.err().contains("nope: not a directory"), run.toString());
        CommandRun depth = CommandRun.execute(new ServeBenchCommand(), dir.toString(), "--prefetch-depth", "0");
        assertEquals(2, depth.exitCode(), depth.toString());
        assertTrue(depth.err().startsWith("gdsloader serve-bench: --prefetch-depth must be 1..64, got 0\n"), depth.toString());
        CommandRun both = CommandRun.execute(new ServeBenchCommand(), dir.toString(), "--direct", "--no-direct");
        assertEquals(2, both.exitCode(), both.toString());
        assertTrue(both.err().contains("--direct and --no-direct: give one of them"), both.toString());
    }
}
