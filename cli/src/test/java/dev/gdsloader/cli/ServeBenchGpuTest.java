package dev.gdsloader.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.gdsloader.cuda.Cuda;
import dev.gdsloader.loader.dataset.Dataset;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.Map;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code gdsloader serve-bench} on a GPU: the CUDA IPC rows are measured (the loader in this JVM, then a child JVM
 * reading the same epochs through CUDA IPC from the in-process server), each with the dataset's bytes and records per
 * epoch, and the ipc row's ratio is against the in-process row. Skips without a GPU.
 */
@Tag("gpu")
@Timeout(300)
class ServeBenchGpuTest {
    @TempDir
    Path dir;

    @Test
    void theCudaIpcRowsAreMeasuredAgainstTheSameLoaderInProcess() throws Exception {
        Path data = generateOnGpu("bench", "32MiB", "4");
        Dataset d = Dataset.open(data);
        Path out = Files.createDirectories(dir.resolve("out"));
        CommandRun run = CommandRun.execute(new ServeBenchCommand(), data.toString(), "--clients", "1,2", "--epochs", "2",
                "--batch-size", "32", "--out", out.toString());
        assertEquals(0, run.exitCode(), run.toString());
        Map<String, JsonNode> rows = new HashMap<>();
        new ObjectMapper().readTree(Files.readString(out.resolve("serve-bench.json"))).path("rows")
                .forEach(r -> rows.put(r.path("id").asText(), r));
        JsonNode in = rows.get("ipc-in-process");
        JsonNode ipc = rows.get("ipc");
        for (JsonNode r : new JsonNode[] {in, ipc}) {
            assertTrue(r.path("skipped").isNull(), r.toString());
            assertEquals(2 * d.dataBytes(), r.path("bytes").asLong(), r.toString());
            assertEquals(2 * d.recordCount(), r.path("records").asLong(), r.toString());
            assertTrue(r.path("gbps").asDouble() > 0, r.toString());
        }
        assertEquals(ipc.path("gbps").asDouble() / in.path("gbps").asDouble(), ipc.path("ratio").asDouble(), 1e-9);
        assertTrue(run.out().lines().anyMatch(l -> l.startsWith("ipc ") && !l.contains("skipped")), run.out());
    }

    /** Skips without a GPU; else {@code gdsloader generate} of 64 KiB records into {@code dir/data/NAME}. */
    private Path generateOnGpu(String name, String size, String shards) {
        assumeTrue(Cuda.availability().available(), () -> "no GPU: " + Cuda.availability().reason());
        Path data = dir.resolve("data").resolve(name);
        CommandRun gen = CommandRun.execute(new GenerateCommand(), "--out", data.toString(), "--size", size,
                "--shards", shards, "--record-bytes", "64KiB", "--align", "4096");
        assertEquals(0, gen.exitCode(), gen.toString());
        return data;
    }
}
