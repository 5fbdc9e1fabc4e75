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

    /**
     * {@code --trace}: under the ipc row, the server's 6 stages per epoch (the warm-up epoch 0, then 1 and 2) and the
     * child's 5 client stages and 2 loop stages over the measured epochs, whose counts agree: every batch the server
     * put in epochs 1 and 2 came back as a release there, and was taken, synchronized and released once by the child.
     */
    @Test
    void traceSummarizesEveryStageOfBothSidesWithCountsThatAgree() throws Exception {
        Path data = generateOnGpu("traced", "16MiB", "2");
        Path out = Files.createDirectories(dir.resolve("out-trace"));
        CommandRun run = CommandRun.execute(new ServeBenchCommand(), data.toString(), "--clients", "1", "--epochs", "2",
                "--batch-size", "16", "--trace", "--out", out.toString());
        assertEquals(0, run.exitCode(), run.toString());
        JsonNode ipc = null;
        for (JsonNode r : new ObjectMapper().readTree(Files.readString(out.resolve("serve-bench.json"))).path("rows")) {
            ipc = r.path("id").asText().equals("ipc") ? r : ipc;
        }
        java.util.List<String> lines = new java.util.ArrayList<>();
        ipc.path("trace").forEach(l -> lines.add(l.asText()));
        assertEquals(3 * 6 + 7, lines.size(), String.join("\n", lines));
        long put = n(lines, "epoch 1: server session ", " putNext") + n(lines, "epoch 2: server session ", " putNext");
        assertTrue(put > 0, String.join("\n", lines));
        assertEquals(put, n(lines, "epoch 1: server session ", " lent->release") + n(lines, "epoch 2: server session ", " lent->release"),
                String.join("\n", lines));
        assertEquals(put, n(lines, "child JVM, measured epochs: child loop", " iterator.next"));
        assertEquals(put, n(lines, "child JVM, measured epochs: client", " release:streamSynchronize"));
        assertEquals(put, n(lines, "child JVM, measured epochs: client", " release:send"));
        long next = n(lines, "child JVM, measured epochs: client", " stream.next");
        assertTrue(next >= put && next <= put + 2, "a stream.next per batch and per end message: " + next + " vs " + put);
        assertTrue(run.out().contains("    trace epoch 1: server session "), run.out());
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

    /** @return the n= of the one line starting with {@code prefix} and naming {@code stage} */
    private static long n(java.util.List<String> lines, String prefix, String stage) {
        java.util.List<String> hits = lines.stream().filter(l -> l.startsWith(prefix) && l.contains(stage + ": n=")).toList();
        assertEquals(1, hits.size(), prefix + "..." + stage + " in\n" + String.join("\n", lines));
        String rest = hits.getFirst().substring(hits.getFirst().indexOf(stage + ": n=") + stage.length() + 4);
        return Long.parseLong(rest.substring(0, rest.indexOf(' ')));
    }
}
