package dev.gdsloader.service;

import dev.gdsloader.formats.DType;
import dev.gdsloader.formats.npy.NpyWriter;
import dev.gdsloader.loader.path.ReadPath;
import dev.gdsloader.loader.sampler.Shuffle;
import dev.gdsloader.service.client.PrefetchClient;
import dev.gdsloader.service.client.RemoteBatch;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.BitSet;
import java.util.Iterator;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;


/**
 * A cluster part's server (a child JVM) killed with SIGKILL in the middle of a client's stream of that part and started
 * again on the same port: the client resumes that endpoint after the last batch it handed out and goes on to the next
 * part, so the epoch has every record of the three parts exactly once, byte for byte (issue 12, items 6 and 7).
 */
@Timeout(180)
class ClusterKillResumeTest {
    /** Records per part, of {@link #RECORD_BYTES} each: 12 MiB a part, more than gRPC's windows and socket buffers hold. */
    private static final int PART_RECORDS = 24;
    private static final int RECORD_BYTES = 512 << 10;
    private static final int PARTS = 3;

    @TempDir
    Path dir;

    private static byte value(long record, int k) {
        return (byte) (record * 31 + k * 7L + (k >>> 9) * 13L);
    }

    private Process start(int part, int[] ports, String members, String name) throws Exception {
        Path err = dir.resolve(name + ".err");
        Process p = ChildJvm.command(ServerChild.class, List.of(), dir.resolve("part-" + part).toString(),
                Integer.toString(ports[part]), members, Integer.toString(part)).redirectError(err.toFile()).start();
        String first = new BufferedReader(new InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8)).readLine();
        assertEquals("port " + ports[part], first, Files.readString(err));
        return p;
    }

    @Test
    void aKilledAndRestartedPartServerIsResumedAfterTheLastBatchOfThatPart() throws Exception {
        int[] ports = new int[PARTS];
        for (int j = 0; j < PARTS; j++) {
            Path d = Files.createDirectories(dir.resolve("part-" + j).resolve("big"));
            byte[] data = new byte[PART_RECORDS * RECORD_BYTES];
            for (int i = 0; i < data.length; i++) {
                data[i] = value((long) j * PART_RECORDS + i / RECORD_BYTES, i % RECORD_BYTES);
            }
            NpyWriter.write(d.resolve("x-00000.npy"), DType.UINT8, new long[] {PART_RECORDS, RECORD_BYTES}, data);
            try (ServerSocket s = new ServerSocket(0)) {
                ports[j] = s.getLocalPort();
            }
        }
        String members = String.join(",", java.util.Arrays.stream(ports).mapToObj(p -> "127.0.0.1:" + p).toList());
        List<Process> servers = new ArrayList<>();
        for (int j = 0; j < PARTS; j++) {
            servers.add(start(j, ports, members, "server-" + j));
        }
        try (PrefetchClient c = PrefetchClient.builder("127.0.0.1", ports[2]).dataset("big").batchSize(1).path(ReadPath.HOST)
                .shuffle(Shuffle.GLOBAL, 5).prefetchDepth(2).timeout(Duration.ofSeconds(30))
                .reconnectTimeout(Duration.ofSeconds(60)).open()) {
            BitSet seen = new BitSet();
            int batches = 0;
            int ofPartOne = 0;
            boolean restarted = false;
            Iterator<RemoteBatch> it = c.iterator();
            while (it.hasNext()) {
                long record;
                try (RemoteBatch b = it.next()) {
                    record = b.recordIndex(0);
                    byte[] got = b.column("x").toByteArray();
                    byte[] want = new byte[RECORD_BYTES];
                    for (int k = 0; k < RECORD_BYTES; k++) {
                        want[k] = value(record, k);
                    }
                    assertArrayEquals(want, got, b.toString() + " of record " + record);
                    assertFalse(seen.get((int) record), "record " + record + " twice");
                    seen.set((int) record);
                    batches++;
                }
                if (record / PART_RECORDS == 1 && ++ofPartOne == 3) {
                    Process one = servers.get(1);
                    one.destroyForcibly(); // SIGKILL in the middle of the part's stream
                    assertTrue(one.waitFor(10, TimeUnit.SECONDS));
                    servers.set(1, start(1, ports, members, "server-1-again"));
                    restarted = true;
                }
            }
            assertTrue(restarted, "the epoch reached part 1");
            assertEquals(PARTS * PART_RECORDS, seen.cardinality(), "every record of the three parts once across the kill");
            assertEquals(c.batchesPerEpoch(), batches);
            assertNotNull(c.lastState());
        } finally {
            for (Process p : servers) {
                p.getOutputStream().close();
                if (!p.waitFor(30, TimeUnit.SECONDS)) {
                    p.destroyForcibly();
                }
            }
        }
    }
}
