package dev.gdsloader.loader.dataset;

import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import dev.gdsloader.loader.TestShards;
import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** A FIFO among the shards would block the first read forever: it is refused when the dataset opens. */
class DatasetFifoTest {
    @TempDir
    Path dir;

    @Test
    void aFifoInTheShardListIsRefusedNamingItInsteadOfHanging() throws Exception {
        TestShards.writeImages(dir, 4);
        Path fifo = dir.resolve("images-00001.npy");
        int rc = new ProcessBuilder("mkfifo", fifo.toString()).start().waitFor();
        assumeTrue(rc == 0, "mkfifo is not available");
        org.junit.jupiter.api.Assertions.assertTimeoutPreemptively(Duration.ofSeconds(20), () -> {
            IOException e = assertThrows(IOException.class, () -> Dataset.open(dir));
            assertTrue(e.getMessage().contains(fifo.toString()) && e.getMessage().contains("FIFO"), e.getMessage());
        });
    }
}
