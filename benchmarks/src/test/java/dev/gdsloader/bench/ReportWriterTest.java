package dev.gdsloader.bench;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.gdsloader.loader.path.PathTaken;
import dev.gdsloader.loader.path.ReadPath;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The report files say "not measured" the way the printed table does: an empty CSV field and "-", never NaN. */
class ReportWriterTest {
    @TempDir
    Path dir;

    @Test
    void csvAndMarkdownLeaveEmptyWhereTheTablePrintsADashAndNeverWriteNaN() throws Exception {
        // a HOST row whose CPU time the JVM could not tell (NaN), and the ceiling row, which has no batches, stall or CPU
        BenchReport r = new BenchReport(1000, 10, 1, 2.0, true, false, List.of(new BenchRow(ReadPath.HOST, PathTaken.HOST,
                1.5, 1.4, 1.6, 4, 0.5, "OK", 0.75, false, Double.NaN)), List.of());
        ReportWriter.write(r, "gdsloader bench", dir);
        List<String> csv = Files.readAllLines(dir.resolve("bench.csv"));
        assertEquals(3, csv.size(), "header, ceiling, HOST: " + csv);
        for (String line : csv) {
            assertFalse(line.contains("NaN"), "CSV: " + csv);
        }
        // setting,path,taken,gbps,minGbps,maxGbps,batches,stallMillis,ceilingRatio,checksum,cache,cpu,records/s
        assertEquals(List.of("default", "\"raw O_DIRECT read\"", "O_DIRECT", "2.0", "", "", "", "", "1.0", "", "warm", "", "", ""),
                List.of(csv.get(1).split(",", -1)), csv.get(1));
        assertEquals(List.of("default", "HOST", "HOST", "1.5", "1.4", "1.6", "4", "0.5", "0.75", "OK", "warm", "", "", ""),
                List.of(csv.get(2).split(",", -1)), csv.get(2));
        String md = Files.readString(dir.resolve("bench.md"));
        assertFalse(md.contains("NaN"), md);
        assertTrue(md.contains("| raw O_DIRECT read | O_DIRECT | 2.000 | - | - | - | 1.00 | - | warm | - | - | - |"), md);
        assertTrue(md.contains("| HOST | HOST | 1.500 | 1.400-1.600 | 4 | 0.5 | 0.75 | OK | warm | - | - | - |"), md);
    }
}
