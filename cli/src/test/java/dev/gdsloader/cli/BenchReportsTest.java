package dev.gdsloader.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** {@code bench --quick --out}: a small real run writes every report, and {@code plot} redraws from the JSON. */
class BenchReportsTest {
    @TempDir
    Path dir;

    @Test
    void quickBenchWritesJsonCsvMarkdownAndAPlotThatPlotCanRedraw() throws Exception {
        Path out = dir.resolve("reports");
        CommandRun run = CommandRun.execute(new BenchCommand(), "--quick", "--work-dir", dir.toString(), "--out", out.toString());
        assertEquals(0, run.exitCode(), run.out() + run.err());
        for (String f : List.of("bench.json", "bench.csv", "bench.md", "bench.png")) {
            assertTrue(Files.size(out.resolve(f)) > 0, f);
        }
        JsonNode json = new ObjectMapper().readTree(out.resolve("bench.json").toFile());
        JsonNode report = json.get("reports").get("default");
        assertEquals("HOST", report.get("rows").get(0).get("taken").asText());
        assertEquals("OK", report.get("rows").get(0).get("checksum").asText());
        assertTrue(report.get("ceilingGbps").asDouble() > 0);
        double cpu = report.get("rows").get(0).get("cpuSecondsPerGigabyte").asDouble();
        assertTrue(cpu > 0 && Double.isFinite(cpu), "CPU s/GB of the HOST row: " + report);
        assertEquals("sequential", report.get("order").asText());
        assertTrue(report.get("gather").isNull(), "no gather ceiling without a shuffle and a GPU: " + report);
        List<String> csv = Files.readAllLines(out.resolve("bench.csv"));
        assertEquals("setting,path,taken,gbps,minGbps,maxGbps,batches,stallMillis,ceilingRatio,checksum,cache,"
                + "cpuSecondsPerGigabyte,recordsPerSecond,heapBytesPerBatch", csv.get(0));
        assertEquals(3, csv.size(), "header, ceiling, HOST");
        String[] host = csv.get(2).split(",", -1);
        assertEquals("HOST", host[1], csv.get(2));
        assertEquals(cpu, Double.parseDouble(host[11]), cpu * 1e-9, csv.get(2));
        String md = Files.readString(out.resolve("bench.md"));
        assertTrue(md.contains("| path | taken | GB/s | min-max | batches | stall ms | x ceiling | checksum | cache | CPU s/GB | records/s |"), md);
        assertTrue(md.contains(String.format(java.util.Locale.ROOT, "| OK | warm | %.3f |", cpu)), md);
        assertTrue(run.out().contains("CPU s/GB"), run.out());
        Files.delete(out.resolve("bench.png"));
        CommandRun plot = CommandRun.execute(new PlotCommand(), out.resolve("bench.json").toString());
        assertEquals(0, plot.exitCode(), plot.err());
        assertTrue(Files.size(out.resolve("bench.png")) > 1000);
        try (var s = Files.list(dir)) {
            assertEquals(List.of(out), s.toList(), "the generated data was deleted");
        }
    }
}
