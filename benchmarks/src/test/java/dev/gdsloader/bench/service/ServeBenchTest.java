package dev.gdsloader.bench.service;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@link ServeBench}'s report without a server: the acceptance line, the JSON, the printed table,
 * the bench server's limits and the page touch. The measured rows run through {@code gdsloader serve-bench}
 * (cli's ServeBenchCommandTest).
 */
class ServeBenchTest {
    @TempDir
    Path dir;

    /** The closing line counts and names the rows below their acceptance; skipped rows are named as not judged. */
    @Test
    void theLastLineCountsAndNamesTheRowsBelowTheirAcceptance() {
        ServeBench.Row loop = new ServeBench.Row("loopback", "tcp", 100, 0, 1, 1e-7, Double.NaN, Double.NaN, null, null, null);
        ServeBench.Row host1 = new ServeBench.Row("host-1", "one", 100, 10, 1, 0.37e-7, 10, Double.NaN, "loopback", ">= 0.5", null)
                .against(loop);
        ServeBench.Row host4 = new ServeBench.Row("host-4", "four", 100, 10, 1, 1e-7, 10, Double.NaN, "host-1", ">= 2", null)
                .against(host1);
        ServeBench.Row in = new ServeBench.Row("ipc-in-process", "in", 100, 10, 1, 1e-7, 10, Double.NaN, null, null, null);
        ServeBench.Row ipc = new ServeBench.Row("ipc", "child", 100, 10, 1, 0.62e-7, 10, Double.NaN, "ipc-in-process", ">= 0.9", null)
                .against(in);
        ServeBench.Row py = ServeBench.Row.skipped("python", "py", "host-1", ">= 0.8", "not asked");
        List<ServeBench.Row> rows = List.of(loop, host1, host4, in, ipc, py);
        assertEquals("serve-bench: 2 of 3 rows below acceptance: host-1 (0.37 < 0.5), ipc (0.62 < 0.9); not judged (skipped or "
                + "no ratio): python", ServeBench.acceptanceLine(rows));
        ServeBench.Config c = new ServeBench.Config(dir, dev.gdsloader.loader.LoaderOptions.defaults().withBatchSize(8),
                List.of(), 1, dev.gdsloader.loader.path.ReadPath.AUTO, 0, List.of(), java.time.Duration.ofSeconds(1), 1 << 20, 1);
        JsonNode j = ServeBench.json(rows, c, "gdsloader serve-bench");
        assertEquals(2, j.path("belowAcceptance").asInt(), j.toString());
        assertEquals("[\"host-1\",\"ipc\"]", j.path("belowAcceptanceRows").toString());
        assertEquals("serve-bench: 0 of 2 rows below acceptance", ServeBench.acceptanceLine(List.of(loop, host4, in, ipc.against(ipc))));
    }

    @Test
    void theBenchServerAdmitsTwoSessionsPerClientOfTheLargestRow() {
        dev.gdsloader.service.server.ServerLimits l = ServeBench.limitsFor(32, 1L << 30);
        assertEquals(64, l.sessionsPerClient()); // each client's GetFlightInfo session and its stream's, at once
        assertTrue(l.sessions() >= 64 && l.connections() >= 72, l.toString());
        assertEquals(dev.gdsloader.service.server.ServerLimits.defaults().sessionsPerClient(), ServeBench.limitsFor(1, 1L << 30)
                .sessionsPerClient());
    }

    /** The table prints a header and one line per row with its ratio; the JSON carries {@code --ipc-epochs}. */
    @Test
    void eachRowPrintsOneLineAndTheJsonCarriesTheIpcEpochs() {
        ServeBench.Row in = new ServeBench.Row("ipc-in-process", "in", 100, 10, 1, 1e-7, 10, Double.NaN, null, null, null);
        ServeBench.Row ipc = new ServeBench.Row("ipc", "child", 50, 5, 1, 5e-8, 5, Double.NaN, "ipc-in-process", ">= 0.9",
                null).against(in);
        java.io.ByteArrayOutputStream bytes = new java.io.ByteArrayOutputStream();
        ServeBench.print(List.of(in, ipc), new java.io.PrintStream(bytes, true, java.nio.charset.StandardCharsets.UTF_8));
        List<String> lines = bytes.toString(java.nio.charset.StandardCharsets.UTF_8).lines().toList();
        assertEquals(3, lines.size(), lines.toString());
        assertTrue(lines.get(2).startsWith("ipc "), lines.toString());
        assertTrue(lines.get(2).contains(" 0.50 "), "the ratio against ipc-in-process: " + lines);
        ServeBench.Config c = new ServeBench.Config(dir, dev.gdsloader.loader.LoaderOptions.defaults().withBatchSize(8),
                List.of(), 1, dev.gdsloader.loader.path.ReadPath.AUTO, 0, List.of(), java.time.Duration.ofSeconds(1), 1 << 20, 5);
        JsonNode report = ServeBench.json(List.of(in, ipc), c, "gdsloader serve-bench");
        assertEquals(5, report.path("ipcEpochs").asInt(), report.toString());
        assertEquals(2, report.path("rows").size(), report.toString());
    }

    @Test
    void touchReadsEveryPageAndTheLastByte() {
        ByteBuffer b = ByteBuffer.allocate(3 * 4096 + 3);
        b.putLong(0, 1).putLong(4096, 10).putLong(8192, 100).put(b.limit() - 1, (byte) 7).putLong(8, 1000);
        assertEquals(118, ServeBench.touch(b));
        assertEquals(0, ServeBench.touch(ByteBuffer.allocate(0)));
    }
}
