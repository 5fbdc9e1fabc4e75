package dev.gdsloader.loader;

import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.gdsloader.loader.path.ReadPath;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Iterator;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** A consumer that keeps iterating after the epoch failed sees it end instead of waiting forever. */
class ReaderEndTest {
    @TempDir
    Path dir;

    @Test
    void aConsumerThatCarriesOnAfterAReadTimeoutSeesTheEpochEnd() throws IOException {
        TestShards.writeImages(dir, 4000); // about 3 MB: reads take longer than the 1 ms allowed
        assertTimeoutPreemptively(Duration.ofSeconds(30), () -> {
            try (GdsLoader loader = GdsLoader.builder(dir).batchSize(1000).path(ReadPath.HOST).maxIoBytes(4096)
                    .directIo(true).ioThreads(1).ioTimeoutMillis(1).build()) {
                Iterator<Batch> it = loader.iterator();
                boolean timedOut = false;
                while (it.hasNext()) {
                    try {
                        it.next().close();
                    } catch (UncheckedIOException e) {
                        timedOut |= e.getMessage().contains("did not finish within");
                    }
                }
                assertTrue(timedOut, "a 1 ms I/O timeout fired");
            }
        });
    }
}
