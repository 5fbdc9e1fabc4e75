package dev.gdsloader.metrics;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.gdsloader.formats.DType;
import dev.gdsloader.formats.npy.NpyWriter;
import dev.gdsloader.loader.Batch;
import dev.gdsloader.loader.GdsLoader;
import dev.gdsloader.loader.LoaderStats;
import dev.gdsloader.loader.path.ReadPath;
import io.micrometer.core.instrument.Meter;
import io.micrometer.core.instrument.Tags;
import io.micrometer.core.instrument.search.RequiredSearch;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.io.IOException;
import java.nio.file.Path;
import java.util.Iterator;
import java.util.List;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@link LoaderMetrics} on a real loader: {@code .npy} shards written to disk, loaded on the HOST path (no GPU needed),
 * the registry's values compared with the data's known sizes and with {@link GdsLoader#stats()}, mid-epoch, at the end
 * of an epoch and in the next epoch.
 */
class LoaderMetricsTest {
    /** Records in the dataset: two shards of 18 and 12. */
    private static final int RECORDS = 30;
    /** Records per batch: 5 batches, the last one of 2 records. */
    private static final int BATCH = 7;
    /** Bytes of one record: a 28 x 28 uint8 image and a uint8 label. */
    private static final long RECORD_BYTES = 28 * 28 + 1;

    @TempDir
    Path dir;

    @BeforeEach
    void writeShards() throws IOException {
        int first = 0;
        int[] shardRecords = {18, 12};
        for (int s = 0; s < shardRecords.length; s++) {
            int n = shardRecords[s];
            byte[] images = new byte[n * 28 * 28];
            byte[] labels = new byte[n];
            for (int i = 0; i < images.length; i++) {
                images[i] = (byte) (first * 31 + i);
            }
            for (int i = 0; i < n; i++) {
                labels[i] = (byte) (first + i);
            }
            NpyWriter.write(dir.resolve(String.format("images-%05d.npy", s)), DType.UINT8, new long[] {n, 28, 28}, images);
            NpyWriter.write(dir.resolve(String.format("labels-%05d.npy", s)), DType.UINT8, new long[] {n}, labels);
            first += n;
        }
    }

    @Test
    void metersReportTheEpochInProgressAndRestartWithTheNext() throws IOException {
        SimpleMeterRegistry registry = new SimpleMeterRegistry();
        try (GdsLoader loader = GdsLoader.builder(dir).batchSize(BATCH).path(ReadPath.HOST).build()) {
            LoaderMetrics.bind(registry, loader, Tags.of("rank", "0"));
            List<Meter> meters = registry.getMeters();
            assertEquals(7, meters.size(), meters.toString());
            for (Meter m : meters) {
                assertEquals("HOST", m.getId().getTag("path"), m.getId().toString());
                assertEquals("0", m.getId().getTag("rank"), m.getId().toString());
            }
            assertEquals(0, counter(registry, "gdsloader.batches"));

            Iterator<Batch> epoch0 = loader.iterator();
            try (Batch b = epoch0.next()) {
                assertEquals(BATCH, b.records());
                assertEquals(1, counter(registry, "gdsloader.batches"));
                assertEquals(BATCH * RECORD_BYTES, counter(registry, "gdsloader.bytes"));
                double inFlight = gauge(registry, "gdsloader.slots.in.flight");
                assertTrue(inFlight >= 1, "the batch held here is in flight: " + inFlight);
            }
            try (Batch b = epoch0.next()) {
                assertEquals(BATCH, b.records());
                assertEquals(2, counter(registry, "gdsloader.batches"));
                assertEquals(2 * BATCH * RECORD_BYTES, counter(registry, "gdsloader.bytes"));
            }
            while (epoch0.hasNext()) {
                epoch0.next().close();
            }
            LoaderStats s = loader.stats();
            assertEquals(5, counter(registry, "gdsloader.batches"));
            assertEquals(RECORDS * RECORD_BYTES, counter(registry, "gdsloader.bytes"));
            assertEquals((double) s.storageBytes(), counter(registry, "gdsloader.storage.bytes"));
            assertTrue(s.storageBytes() >= RECORDS * RECORD_BYTES, s.toString());
            assertEquals(s.stallNanos() / 1e9, counter(registry, "gdsloader.stall"), 1e-12);
            assertEquals(s.ioNanos() / 1e9, counter(registry, "gdsloader.io"), 1e-12);
            assertTrue(s.ioNanos() > 0, s.toString());
            assertEquals(s.gigabytesPerSecond(), gauge(registry, "gdsloader.throughput"), 1e-12);
            assertTrue(s.gigabytesPerSecond() > 0, s.toString());
            assertEquals(s.slotsInFlight(), gauge(registry, "gdsloader.slots.in.flight"));

            Iterator<Batch> epoch1 = loader.iterator();
            epoch1.next().close();
            assertEquals(1, counter(registry, "gdsloader.batches"), "counters restart with each epoch");
            assertEquals(BATCH * RECORD_BYTES, counter(registry, "gdsloader.bytes"));
            while (epoch1.hasNext()) {
                epoch1.next().close();
            }
        }
    }

    @Test
    void aPathTagAmongTheCallersIsReplacedByTheLoaders() throws IOException {
        SimpleMeterRegistry registry = new SimpleMeterRegistry();
        try (GdsLoader loader = GdsLoader.builder(dir).batchSize(BATCH).path(ReadPath.HOST).build()) {
            LoaderMetrics.bind(registry, loader, Tags.of("path", "GDS"));
            assertEquals(7, registry.getMeters().size(), registry.getMeters().toString());
            assertEquals(7, registry.find("gdsloader.batches").tag("path", "HOST").meters().size()
                    + registry.find("gdsloader.bytes").tag("path", "HOST").meters().size()
                    + registry.find("gdsloader.storage.bytes").tag("path", "HOST").meters().size()
                    + registry.find("gdsloader.stall").tag("path", "HOST").meters().size()
                    + registry.find("gdsloader.io").tag("path", "HOST").meters().size()
                    + registry.find("gdsloader.throughput").tag("path", "HOST").meters().size()
                    + registry.find("gdsloader.slots.in.flight").tag("path", "HOST").meters().size());
        }
    }

    private static double counter(SimpleMeterRegistry registry, String name) {
        return search(registry, name).functionCounter().count();
    }

    private static double gauge(SimpleMeterRegistry registry, String name) {
        return search(registry, name).gauge().value();
    }

    private static RequiredSearch search(SimpleMeterRegistry registry, String name) {
        return registry.get(name).tag("path", "HOST").tag("rank", "0");
    }
}
