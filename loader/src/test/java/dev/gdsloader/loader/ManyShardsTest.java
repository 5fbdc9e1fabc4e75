package dev.gdsloader.loader;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.gdsloader.formats.DType;
import dev.gdsloader.formats.npy.NpyWriter;
import dev.gdsloader.loader.path.ReadPath;
import java.io.IOException;
import java.lang.foreign.ValueLayout;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * Issue 21, finding 12: a dataset of 100,000 shards (one 8-byte record each, real {@code .npy} files) loads every
 * record byte-exact through the loader's API, with the process's open descriptors (counted in {@code /proc/self/fd},
 * whatever {@code ulimit -n} is) staying within the open-file cache's bound instead of one per shard.
 */
@Timeout(300)
class ManyShardsTest {
    private static final int SHARDS = Integer.getInteger("shards", 100_000);
    private static final int RECORD = 8;
    /** The cache's most (1024) per engine, plus the JVM's, surefire's and the I/O threads' own descriptors. */
    private static final int MOST_NEW_FDS = 1024 + 128;

    @TempDir
    Path dir;

    private static void record(long i, byte[] into) {
        for (int j = 0; j < RECORD; j++) {
            into[j] = (byte) ((i >>> (8L * (j & 3))) ^ (j * 37L));
        }
    }

    private static String name(int shard) {
        return String.format("x-%06d.npy", shard);
    }

    /** @return this process's CPU time so far, user and system, ms ({@code /proc/self/stat}, 100 ticks a second) */
    private static long cpuMillis() throws IOException {
        String stat = Files.readString(Path.of("/proc/self/stat"));
        String[] f = stat.substring(stat.lastIndexOf(')') + 2).split(" ", -1);
        return (Long.parseLong(f[11]) + Long.parseLong(f[12])) * 10;
    }

    private static int openFds() throws IOException {
        try (Stream<Path> s = Files.list(Path.of("/proc/self/fd"))) {
            return (int) s.count();
        }
    }

    @Test
    void aHundredThousandShardsLoadEveryRecordByteExactWithBoundedDescriptors() throws IOException {
        byte[] rec = new byte[RECORD];
        long tw = System.nanoTime();
        // the first shard by the project's writer; the others are its bytes with their own record (one header)
        record(0, rec);
        NpyWriter.write(dir.resolve(name(0)), DType.UINT8, new long[] {1, RECORD}, rec);
        byte[] file = Files.readAllBytes(dir.resolve(name(0)));
        int data = file.length - RECORD;
        for (int s = 1; s < SHARDS; s++) {
            record(s, rec);
            System.arraycopy(rec, 0, file, data, RECORD);
            Files.write(dir.resolve(name(s)), file);
        }
        long written = System.nanoTime() - tw;
        long t0 = System.nanoTime();
        long cpu0 = cpuMillis();
        int before = openFds();
        int most = before;
        long seen = 0;
        boolean[] got = new boolean[SHARDS];
        try (GdsLoader loader = GdsLoader.builder(dir).batchSize(1000).path(ReadPath.HOST).ioThreads(2).build()) {
            for (Batch b : loader) {
                try (b) {
                    byte[] bytes = b.column("x").hostSegment().toArray(ValueLayout.JAVA_BYTE);
                    long[] ids = b.recordIndices();
                    for (int i = 0; i < ids.length; i++) {
                        record(ids[i], rec);
                        for (int j = 0; j < RECORD; j++) {
                            if (bytes[i * RECORD + j] != rec[j]) {
                                throw new AssertionError("sample " + i + " of batch " + b.index() + " is not record " + ids[i]);
                            }
                        }
                        got[(int) ids[i]] = true;
                        seen++;
                    }
                    most = Math.max(most, openFds());
                }
            }
        }
        System.err.println("ManyShardsTest: " + SHARDS + " shards written in " + written / 1_000_000 + " ms, loaded in "
                + (System.nanoTime() - t0) / 1_000_000 + " ms (" + (cpuMillis() - cpu0) + " ms of CPU, all threads); open descriptors "
                + before + " before, at most " + most);
        assertEquals(SHARDS, seen);
        for (int s = 0; s < SHARDS; s++) {
            assertTrue(got[s], "record " + s + " never came");
        }
        assertTrue(most - before <= MOST_NEW_FDS, "descriptors rose from " + before + " to " + most);
    }
}
