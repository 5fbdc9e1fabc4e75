package dev.gdsloader.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.gdsloader.cuda.Cuda;
import dev.gdsloader.loader.dataset.Dataset;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
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
        Path data = dir.resolve("data").resolve("bench");
        CommandRun gen = CommandRun.execute(new GenerateCommand(), "--out", data.toString(), "--size", "4MiB",
                "--shards", "3", "--record-bytes", "4KiB");
        assertEquals(0, gen.exitCode(), gen.toString());
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
    }

    @Test
    void touchReadsEveryPageAndTheLastByte() {
        ByteBuffer b = ByteBuffer.allocate(3 * 4096 + 3);
        b.putLong(0, 1).putLong(4096, 10).putLong(8192, 100).put(b.limit() - 1, (byte) 7).putLong(8, 1000);
        assertEquals(118, ServeBench.touch(b));
        assertEquals(0, ServeBench.touch(ByteBuffer.allocate(0)));
    }

    @Test
    void aMissingDatasetDirectoryIsRefusedInOneLine() {
        CommandRun run = CommandRun.execute(new ServeBenchCommand(), dir.resolve("nope").toString());
        assertEquals(2, run.exitCode(), run.toString());
        assertTrue(run.err().contains("nope: not a directory"), run.toString());
    }
}
