package dev.gdsloader.service;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.gdsloader.formats.DType;
import dev.gdsloader.formats.npy.NpyWriter;
import dev.gdsloader.loader.ReadPath;
import dev.gdsloader.loader.sampler.Shuffle;
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

/**
 * A session whose loader cannot be built because the server JVM runs out of heap (a real OutOfMemoryError in a
 * real server, {@link ServerChild}, run with a 64 MiB heap): the client gets an ERROR naming it instead of waiting
 * forever, the server frees the session and goes on serving.
 */
@Timeout(120)
class SessionBuildErrorTest {
    /** 2,000,000 one-byte records: a globally shuffled batch of all of them asks the loader for per-piece queues
     *  and plans of millions of entries per slot, 64 slots deep, far past a 64 MiB heap. */
    private static final int RECORDS = 2_000_000;

    @TempDir
    Path root;

    @Test
    void anOutOfMemoryErrorBuildingTheSessionIsAnsweredWithAnErrorAndTheSessionIsFreed() throws Exception {
        Files.createDirectories(root.resolve("big"));
        NpyWriter.write(root.resolve("big").resolve("x-00000.npy"), DType.UINT8, new long[] {RECORDS}, new byte[RECORDS]);
        ServiceShards.write(root.resolve("train"), 10, 10);
        Process p = ChildJvm.command(ServerChild.class, List.of("-Xmx64m"), root.toString())
                .redirectError(root.resolve("child.err").toFile()).start();
        try (BufferedReader out = new BufferedReader(new InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8));
             Writer in = p.outputWriter(StandardCharsets.UTF_8)) {
            String first = out.readLine();
            assertTrue(first != null && first.startsWith("port "), first + " / " + Files.readString(root.resolve("child.err")));
            int port = Integer.parseInt(first.substring(5));
            var e = assertThrows(PrefetchServiceException.class, () -> PrefetchClient.builder("127.0.0.1", port).dataset("big")
                    .batchSize(RECORDS).shuffle(Shuffle.GLOBAL, 42).prefetchDepth(64).path(ReadPath.HOST)
                    .timeout(Duration.ofSeconds(30)).open());
            assertTrue(e.getMessage().contains("OutOfMemoryError"), e.getMessage());
            in.write("\n");
            in.flush();
            assertEquals("sessions 0", out.readLine(), "the failed session is freed");
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
        assertEquals(0, p.exitValue(), Files.readString(root.resolve("child.err")));
    }
}
