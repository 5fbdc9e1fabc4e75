package dev.gdsloader.service;

import dev.gdsloader.formats.DType;
import dev.gdsloader.formats.npy.NpyWriter;
import dev.gdsloader.loader.path.ReadPath;
import dev.gdsloader.loader.sampler.Shuffle;
import dev.gdsloader.service.client.PrefetchClient;
import dev.gdsloader.service.client.PrefetchServiceException;
import dev.gdsloader.service.client.RemoteBatch;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.io.Writer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;


/**
 * A session in a real server with a small heap or little direct memory ({@link ServerChild}, run with a small heap or little
 * direct memory): the client gets an ERROR naming it instead of waiting forever, the server frees the session (every
 * batch back, nothing left in its allocator) and goes on serving.
 */
@Timeout(120)
class SessionBuildErrorTest {
    /** 2,000,000 one-byte records: a globally shuffled batch of all of them asks the loader for per-piece queues
     *  and plans of millions of entries per slot, 16 slots deep (the server's ceiling, ServerLimits.maxPrefetchDepth),
     *  far past a 64 MiB heap. */
    private static final int RECORDS = 2_000_000;

    @TempDir
    Path root;

    /** The body of a test against a server child: its port. */
    private interface WithServer {
        void run(int port) throws Exception;
    }

    /** Runs {@code test} against a {@link ServerChild} over {@link #root}, then checks it freed the session and serves on. */
    private void withServerChild(List<String> jvmOptions, WithServer test) throws Exception {
        ServiceShards.write(root.resolve("train"), 10, 10);
        Path err = root.resolve("child.err");
        List<String> options = new java.util.ArrayList<>(jvmOptions);
        options.add("-Dgdsloader.leakDetection.level=paranoid");
        Process p = ChildJvm.command(ServerChild.class, options, root.toString()).redirectError(err.toFile()).start();
        try (BufferedReader out = new BufferedReader(new InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8));
             Writer in = p.outputWriter(StandardCharsets.UTF_8)) {
            String first = out.readLine();
            assertTrue(first != null && first.startsWith("port "), first + " / " + Files.readString(err));
            int port = Integer.parseInt(first.substring(5));
            test.run(port);
            in.write("\n");
            in.flush();
            assertEquals("sessions 0 leaks 0", out.readLine(), "the failed session is freed, every batch closed");
            try (PrefetchClient c = PrefetchClient.builder("127.0.0.1", port).dataset("train").batchSize(4)
                    .path(ReadPath.HOST).timeout(Duration.ofSeconds(30)).open()) {
                long n = 0;
                for (RemoteBatch b : c) {
                    try (b) {
                        n += b.records();
                    }
                }
                assertEquals(20, n, "the server goes on serving");
            }
        } finally {
            if (!p.waitFor(30, TimeUnit.SECONDS)) {
                p.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
            }
        }
        assertEquals(0, p.exitValue(), Files.readString(err));
        String log = Files.readString(err);
        assertFalse(log.contains("did not close cleanly") || log.contains("LEAK") || log.contains("was not closed"),
                "the session gave everything back: " + log);
    }

    @Test
    void anOutOfMemoryErrorBuildingTheSessionIsAnsweredWithAnErrorAndTheSessionIsFreed() throws Exception {
        Files.createDirectories(root.resolve("big"));
        NpyWriter.write(root.resolve("big").resolve("x-00000.npy"), DType.UINT8, new long[] {RECORDS}, new byte[RECORDS]);
        withServerChild(List.of("-Xmx64m"), port -> {
            var e = assertThrows(PrefetchServiceException.class, () -> PrefetchClient.builder("127.0.0.1", port).dataset("big")
                    .batchSize(RECORDS).shuffle(Shuffle.GLOBAL, 42).prefetchDepth(16).path(ReadPath.HOST)
                    .timeout(Duration.ofSeconds(30)).open());
            assertTrue(e.getMessage().contains("OutOfMemoryError"), e.getMessage());
        });
    }

    /**
     * A host-delivered batch of 16 MiB from a server with 8 MiB of direct memory: the batch goes out zero-copy from the
     * loader's slot (no direct buffer for the payload, as the old framing needed), byte for byte, and the session is freed.
     */
    @Test
    void aBatchLargerThanTheServersDirectMemoryGoesOutZeroCopy() throws Exception {
        int recordBytes = 1 << 20;
        Files.createDirectories(root.resolve("wide"));
        byte[] data = new byte[32 * recordBytes];
        for (int i = 0; i < data.length; i++) {
            data[i] = (byte) (i * 31 + (i >>> 20));
        }
        NpyWriter.write(root.resolve("wide").resolve("x-00000.npy"), DType.UINT8, new long[] {32, recordBytes}, data);
        withServerChild(List.of("-XX:MaxDirectMemorySize=8m"), port -> {
            try (PrefetchClient c = PrefetchClient.builder("127.0.0.1", port).dataset("wide").batchSize(16).prefetchDepth(2)
                    .path(ReadPath.HOST).timeout(Duration.ofSeconds(30)).open()) {
                int batches = 0;
                for (RemoteBatch b : c) {
                    try (b) {
                        byte[] got = b.column("x").toByteArray();
                        assertEquals(16L * recordBytes, got.length);
                        assertTrue(java.util.Arrays.equals(data, (int) b.recordIndex(0) * recordBytes,
                                (int) (b.recordIndex(0) + 16) * recordBytes, got, 0, got.length), "bytes of " + b);
                        batches++;
                    }
                }
                assertEquals(2, batches);
            }
        });
    }
}
