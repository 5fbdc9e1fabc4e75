package dev.gdsloader.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.gdsloader.formats.DType;
import dev.gdsloader.formats.npy.NpyWriter;
import java.io.IOException;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code gdsloader latency DIR --no-direct --epochs 1000 --batch-size 1} while another thread cuts one of the shards
 * with {@code truncate} (issue 21, finding 8): the command exits 2 with one line naming the file, never an
 * {@link InternalError} and never a hang.
 */
class ShardCutCommandTest {
    private static final int RECORDS = 20_000;

    @TempDir
    Path dir;

    @Test
    void latencyOverAShardCutWhileItRunsExitsTwoNamingTheFile() throws Exception {
        Path data = Files.createDirectories(dir.resolve("data"));
        byte[] bytes = new byte[RECORDS * 4];
        for (int i = 0; i < bytes.length; i++) {
            bytes[i] = (byte) (i % 251);
        }
        NpyWriter.write(data.resolve("x-00000.npy"), DType.UINT8, new long[] {RECORDS, 4}, bytes);
        Path victim = data.resolve("x-00001.npy");
        NpyWriter.write(victim, DType.UINT8, new long[] {RECORDS, 4}, bytes);
        CommandRun r = assertTimeoutPreemptively(Duration.ofMinutes(2), () -> {
            CompletableFuture<CommandRun> run = CompletableFuture.supplyAsync(() -> CommandRun.execute(new LatencyCommand(),
                    data.toString(), "--path", "HOST", "--no-direct", "--epochs", "1000", "--batch-size", "1"));
            // 1000 epochs of 40,000 batches: the cut comes while it runs, once the loader has the file open
            while (!run.isDone() && !openHere(victim)) {
                LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(5)); // a poll interval, not a wait for time to pass
            }
            try (FileChannel ch = FileChannel.open(victim, StandardOpenOption.WRITE)) {
                ch.truncate(1000);
            }
            return run.get();
        });
        assertEquals(2, r.exitCode(), r.toString());
        List<String> lines = r.err().lines().toList();
        assertEquals(1, lines.size(), r.toString());
        assertTrue(lines.get(0).startsWith("gdsloader latency: ") && lines.get(0).contains(victim.toString()), r.toString());
        assertTrue(!r.err().contains("InternalError"), r.toString());
    }

    /** Whether this JVM holds a descriptor of {@code file} open (Linux: a link under /proc/self/fd). */
    private static boolean openHere(Path file) throws IOException {
        try (Stream<Path> fds = Files.list(Path.of("/proc/self/fd"))) {
            return fds.anyMatch(fd -> {
                try {
                    return Files.readSymbolicLink(fd).equals(file);
                } catch (IOException e) { // a descriptor closed while listed
                    return false;
                }
            });
        }
    }
}
