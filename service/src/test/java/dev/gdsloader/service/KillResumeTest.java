package dev.gdsloader.service;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.gdsloader.loader.path.ReadPath;
import dev.gdsloader.loader.sampler.Shuffle;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.BitSet;
import java.util.Iterator;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * A server process killed with SIGKILL mid-epoch and started again on the same port: the client reconnects and resumes
 * after the last batch it handed out, so the epoch has every record exactly once, byte for byte (issue 12, "Faults").
 */
@Timeout(180)
class KillResumeTest {
    @TempDir
    Path root;

    private Process startServer(int port, Path err) throws Exception {
        Process p = ChildJvm.command(ServerChild.class, List.of(), root.toString(), Integer.toString(port))
                .redirectError(err.toFile()).start();
        BufferedReader out = new BufferedReader(new InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8));
        String first = out.readLine();
        assertEquals("port " + port, first, Files.readString(err));
        return p;
    }

    @Test
    void aClientFinishesTheEpochExactlyOnceAcrossAKilledAndRestartedServer() throws Exception {
        // 64 records of 512 KiB (32 MiB): more than gRPC's windows and the socket buffers hold, so the kill breaks the
        // stream mid-way (a small epoch would already sit in the client's buffers)
        int records = 64;
        int recordBytes = 512 << 10;
        byte[] data = new byte[records * recordBytes];
        for (int i = 0; i < data.length; i++) {
            data[i] = (byte) (i * 7 + (i >>> 18) * 13);
        }
        Files.createDirectories(root.resolve("train"));
        dev.gdsloader.formats.npy.NpyWriter.write(root.resolve("train").resolve("x-00000.npy"), dev.gdsloader.formats.DType.UINT8,
                new long[] {records, recordBytes}, data);
        int port;
        try (ServerSocket s = new ServerSocket(0)) {
            port = s.getLocalPort();
        }
        Process first = startServer(port, root.resolve("first.err"));
        Process second = null;
        try (PrefetchClient c = PrefetchClient.builder("127.0.0.1", port).dataset("train").batchSize(1).path(ReadPath.HOST)
                .shuffle(Shuffle.GLOBAL, 3).prefetchDepth(2)
                .timeout(Duration.ofSeconds(30)).reconnectTimeout(Duration.ofSeconds(60)).open()) {
            BitSet seen = new BitSet();
            int batches = 0;
            Iterator<RemoteBatch> it = c.iterator();
            while (it.hasNext()) {
                try (RemoteBatch b = it.next()) {
                    long[] rec = b.recordIndices();
                    byte[] want = java.util.Arrays.copyOfRange(data, (int) rec[0] * recordBytes, (int) (rec[0] + 1) * recordBytes);
                    assertArrayEquals(want, b.column("x").toByteArray(), b.toString());
                    for (long r : rec) {
                        assertFalse(seen.get((int) r), "record " + r + " twice");
                        seen.set((int) r);
                    }
                    batches++;
                }
                if (batches == 3) {
                    first.destroyForcibly(); // SIGKILL
                    assertTrue(first.waitFor(10, TimeUnit.SECONDS));
                    second = startServer(port, root.resolve("second.err"));
                }
            }
            assertTrue(second != null, "the epoch outlasted the first server");
            assertEquals(records, seen.cardinality(), "every record once across the kill");
            assertEquals(c.batchesPerEpoch(), batches);
        } finally {
            first.destroyForcibly();
            if (second != null) {
                second.getOutputStream().close(); // end of input: it closes its server and exits
                if (!second.waitFor(30, TimeUnit.SECONDS)) {
                    second.destroyForcibly();
                }
            }
        }
    }
}
