package dev.gdsloader.loader;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.gdsloader.loader.path.ReadPath;
import java.io.IOException;
import java.nio.file.Path;
import java.util.Iterator;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Leaving an epoch early and starting another, as training loops do. */
class EpochRestartTest {
    @TempDir
    Path dir;

    @Test
    void breakingOutOfALoopThenIteratingAgainStartsTheNextEpochFromItsFirstBatch() throws IOException {
        TestShards.writeImages(dir, 50);
        try (GdsLoader loader = GdsLoader.builder(dir).batchSize(5).path(ReadPath.HOST).prefetchDepth(2).build()) {
            for (Batch b : loader) {
                b.close();
                if (b.index() == 2) {
                    break;
                }
            }
            int n = 0;
            for (Batch b : loader) {
                try (b) {
                    assertEquals(1, b.epoch());
                    assertEquals(n, b.index());
                    n++;
                }
            }
            assertEquals(10, n, "the whole next epoch");
        }
    }

    @Test
    void aBatchStillHeldFromTheLeftEpochIsNamedInsteadOfBeingOverwritten() throws IOException {
        TestShards.writeImages(dir, 50);
        try (GdsLoader loader = GdsLoader.builder(dir).batchSize(5).path(ReadPath.HOST).build()) {
            Iterator<Batch> it = loader.iterator();
            Batch held = it.next();
            IllegalStateException e = assertThrows(IllegalStateException.class, loader::iterator);
            assertTrue(e.getMessage().contains("1 unreleased batch"), e.getMessage());
            held.close();
            assertTrue(loader.iterator().hasNext());
        }
    }
}
