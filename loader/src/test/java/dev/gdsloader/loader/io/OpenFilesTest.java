package dev.gdsloader.loader.io;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.gdsloader.formats.DType;
import dev.gdsloader.formats.npy.NpyWriter;
import dev.gdsloader.loader.dataset.Dataset;
import dev.gdsloader.posix.ShardOpener;
import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * The bounded cache of open shard files, over real {@code .npy} shards read through real {@link ShardReader}s: far
 * more shards than the capacity all read byte-exact, at most the capacity stay open, a file in use is never closed
 * under its reader, and four threads reading at random agree with the files.
 */
@Timeout(120)
class OpenFilesTest {
    private static final int RECORD = 16;

    @TempDir
    Path dir;

    /** Writes {@code n} one-record shards; record {@code s}'s bytes are {@link #bytes}. */
    private Dataset shards(int n) throws IOException {
        List<Path> files = new ArrayList<>();
        for (int s = 0; s < n; s++) {
            Path f = dir.resolve(String.format("x-%05d.npy", s));
            NpyWriter.write(f, DType.UINT8, new long[] {1, RECORD}, bytes(s));
            files.add(f);
        }
        return Dataset.ofShards(dir, files);
    }

    private static byte[] bytes(int shard) {
        byte[] b = new byte[RECORD];
        for (int j = 0; j < RECORD; j++) {
            b[j] = (byte) (shard * 31 + j * 7 + (shard >>> 8));
        }
        return b;
    }

    private static OpenFiles<ShardReader> cache(Dataset ds, int capacity) {
        return new OpenFiles<>(ds, shard -> ShardReader.open(shard, false, ShardOpener.byPath()), capacity);
    }

    /** Reads shard {@code s}'s record through the cache and checks it. */
    private static void readAndCheck(OpenFiles<ShardReader> files, Dataset ds, int s, MemorySegment buf) throws IOException {
        long at = ds.columns().get(0).shards().get(s).dataOffset();
        ShardReader r = files.acquire(0, s);
        try {
            assertEquals(RECORD, r.read(buf, 0, RECORD, at), "shard " + s);
        } finally {
            files.release(0, s);
        }
        byte[] got = buf.asSlice(0, RECORD).toArray(ValueLayout.JAVA_BYTE);
        if (!java.util.Arrays.equals(bytes(s), got)) {
            throw new AssertionError("shard " + s + " read other bytes");
        }
    }

    @Test
    void farMoreShardsThanTheCapacityReadExactlyWithAtMostTheCapacityOpen() throws IOException {
        Dataset ds = shards(1000);
        try (OpenFiles<ShardReader> files = cache(ds, 64); Arena a = Arena.ofConfined()) {
            MemorySegment buf = a.allocate(RECORD);
            int most = 0;
            for (int round = 0; round < 2; round++) {
                for (int s = 0; s < 1000; s++) {
                    readAndCheck(files, ds, s, buf);
                    most = Math.max(most, files.openCount());
                }
            }
            assertEquals(64, most, "open files at most");
            long[] counts = files.counts();
            assertEquals(2000, counts[0], "each pass opens every shard anew: the least recently used is closed");
            assertEquals(2000 - 64, counts[1]);
        }
    }

    @Test
    void aFileInUseIsNeverClosedAndTheCacheGoesOverItsCapacityRatherThanWait() throws IOException {
        Dataset ds = shards(200);
        try (OpenFiles<ShardReader> files = cache(ds, 16); Arena a = Arena.ofConfined()) {
            MemorySegment buf = a.allocate(RECORD);
            ShardReader held = files.acquire(0, 7);
            for (int s = 0; s < 200; s++) {
                if (s != 7) {
                    readAndCheck(files, ds, s, buf);
                }
            }
            // still open: it reads its record
            assertEquals(RECORD, held.read(buf, 0, RECORD, ds.columns().get(0).shards().get(7).dataOffset()));
            assertEquals(java.util.Arrays.toString(bytes(7)), java.util.Arrays.toString(buf.asSlice(0, RECORD).toArray(ValueLayout.JAVA_BYTE)));
            files.release(0, 7);
            for (int s = 0; s < 20; s++) { // 20 held at once, capacity 16
                files.acquire(0, 100 + s);
            }
            assertEquals(20, files.openCount(), "over the capacity while all are in use");
            for (int s = 0; s < 20; s++) {
                files.release(0, 100 + s);
            }
            readAndCheck(files, ds, 150, buf);
            assertTrue(files.openCount() <= 16, "back within the capacity: " + files.openCount());
            var e = assertThrows(IllegalStateException.class, () -> files.release(0, 150));
            assertTrue(e.getMessage().contains("released more often than acquired"), e.getMessage());
        }
    }

    @Test
    void fourThreadsReadingAtRandomAgreeWithTheFiles() throws Exception {
        Dataset ds = shards(500);
        ExecutorService pool = Executors.newFixedThreadPool(4);
        try (OpenFiles<ShardReader> files = cache(ds, 8)) {
            List<Future<?>> done = new ArrayList<>();
            for (int t = 0; t < 4; t++) {
                long seed = t;
                done.add(pool.submit(() -> {
                    SplittableRandom r = new SplittableRandom(seed);
                    try (Arena a = Arena.ofConfined()) {
                        MemorySegment buf = a.allocate(RECORD);
                        for (int i = 0; i < 5_000; i++) {
                            readAndCheck(files, ds, r.nextInt(500), buf);
                        }
                    }
                    return null;
                }));
            }
            for (Future<?> f : done) {
                f.get(100, TimeUnit.SECONDS);
            }
            assertTrue(files.openCount() <= 8 + 4, "open files " + files.openCount());
        } finally {
            pool.shutdownNow();
        }
    }

    @Test
    void theDefaultCapacityFollowsTheDescriptorLimitWithinItsBounds() {
        int c = OpenFiles.defaultCapacity();
        long soft = dev.gdsloader.posix.OpenFileLimit.soft();
        assertEquals(Math.clamp(soft / 16, OpenFiles.MIN_CAPACITY, OpenFiles.MAX_CAPACITY), c, "soft limit " + soft);
        assertTrue(soft >= 64, "RLIMIT_NOFILE read as " + soft);
        assertThrows(IllegalArgumentException.class, () -> new OpenFiles<ShardReader>(null, null, -1));
    }
}
