package dev.gdsloader.loader;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.micrometer.core.instrument.Tags;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.io.IOException;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The loader's counters through Micrometer match its own stats. */
class LoaderMetricsTest {
    @TempDir
    Path dir;

    @Test
    void metersReportTheEpochInProgress() throws IOException {
        TestShards.writeImages(dir, 30);
        SimpleMeterRegistry registry = new SimpleMeterRegistry();
        try (GdsLoader loader = GdsLoader.builder(dir).batchSize(7).path(ReadPath.HOST).build()) {
            LoaderMetrics.bind(registry, loader, Tags.of("rank", "0"));
            for (Batch b : loader) {
                b.close();
            }
            assertEquals(5, registry.get("gdsloader.batches").tag("path", "HOST").tag("rank", "0").functionCounter().count());
            assertEquals(30.0 * TestShards.IMAGE_BYTES, registry.get("gdsloader.bytes").functionCounter().count());
            assertTrue(registry.get("gdsloader.storage.bytes").functionCounter().count() >= 30.0 * TestShards.IMAGE_BYTES);
            assertTrue(registry.get("gdsloader.io").functionCounter().count() > 0);
            assertTrue(registry.get("gdsloader.throughput").gauge().value() > 0);
            assertEquals(loader.stats().slotsInFlight(), registry.get("gdsloader.slots.in.flight").gauge().value());
        }
    }
}
