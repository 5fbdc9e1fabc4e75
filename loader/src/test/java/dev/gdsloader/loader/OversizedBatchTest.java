package dev.gdsloader.loader;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.gdsloader.loader.path.ReadPath;
import dev.gdsloader.loader.sampler.Shuffle;
import java.io.IOException;
import java.io.ByteArrayOutputStream;
import java.lang.foreign.ValueLayout;
import java.nio.file.Path;
import java.util.Arrays;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A batch size far larger than the dataset (a user's typo or "one batch, all of it") on the host path over real
 * files: the loader sizes its slots, piece bounds and I/O queue by the records the rank gets per epoch, not by
 * the requested batch, so it builds at once, holds memory for the dataset's records only and delivers them all;
 * the requested batch size stays in the options and the saved state.
 */
class OversizedBatchTest {
    /** 30 records in shards of 7, 13 and 10. */
    private static final int N = 30;

    @TempDir
    Path dir;

    @Test
    void aBatchOfAHundredMillionOverThirtyRecordsBuildsFastHoldsOnlyTheDatasetAndDeliversEveryRecord() throws IOException {
        TestShards.writeImages(dir, 7, 13, 10);
        long t0 = System.nanoTime();
        try (GdsLoader l = GdsLoader.builder(dir).batchSize(100_000_000).shuffle(Shuffle.GLOBAL, 42).path(ReadPath.HOST)
                .directIo(false).prefetchDepth(2).build()) {
            double seconds = (System.nanoTime() - t0) / 1e9;
            assertTrue(seconds < 5, "built in " + seconds + " s");
            assertEquals(100_000_000, l.options().batchSize(), "the requested batch size stays in the options");
            assertEquals(100_000_000, l.state().batchSize(), "and in the saved state");
            long host = l.stats().memory().host();
            // 2 slots of 30 records (plus alignment and per-piece bookkeeping), never 2 x 100,000,000 x 784 B
            assertTrue(host >= 2L * N * TestShards.IMAGE_BYTES && host < 1L << 20,
                    "holds memory for the dataset's 30 records only: " + l.stats().memory());
            ByteArrayOutputStream seen = new ByteArrayOutputStream();
            long[] ids = null;
            int batches = 0;
            for (Batch b : l) {
                try (b) {
                    assertEquals(N, b.records());
                    seen.writeBytes(b.column("images").hostSegment().toArray(ValueLayout.JAVA_BYTE));
                    ids = b.recordIndices();
                    batches++;
                }
            }
            assertEquals(1, batches);
            long[] sorted = ids.clone();
            Arrays.sort(sorted);
            assertArrayEquals(java.util.stream.LongStream.range(0, N).toArray(), sorted, "every record once");
            byte[] got = seen.toByteArray();
            for (int i = 0; i < N; i++) {
                assertArrayEquals(TestShards.images(ids[i], 1), Arrays.copyOfRange(got, i * TestShards.IMAGE_BYTES,
                        (i + 1) * TestShards.IMAGE_BYTES), "record " + ids[i] + " at position " + i);
            }
        }
    }
}
