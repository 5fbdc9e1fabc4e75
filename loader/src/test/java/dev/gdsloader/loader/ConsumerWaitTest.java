package dev.gdsloader.loader;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.gdsloader.loader.path.ReadPath;
import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The consumer waiting for a batch (real shards on disk, HOST path): it takes a batch that is already there without
 * waiting, and a wait ends when the loader is closed from another thread instead of lasting forever.
 */
class ConsumerWaitTest {
    @TempDir
    Path dir;

    @Test
    void aConsumerWaitingForABatchSeesTheEpochEndWhenTheLoaderIsClosed() throws Exception {
        TestShards.writeImages(dir, 40);
        GdsLoader loader = GdsLoader.builder(dir).batchSize(4).path(ReadPath.HOST).prefetchDepth(2).build();
        Iterator<Batch> it = loader.iterator();
        List<Batch> held = new ArrayList<>();
        held.add(it.next());
        held.add(it.next()); // every slot held: the reader cannot load a third batch
        CompletableFuture<Boolean> waiting = CompletableFuture.supplyAsync(it::hasNext);
        Thread.sleep(200);
        assertFalse(waiting.isDone(), "the consumer waits for a batch no slot can hold");
        loader.close(); // from this thread, while the consumer waits
        assertFalse(waiting.get(5, TimeUnit.SECONDS), "the wait ended with the loader");
        assertFalse(it.hasNext());
        held.forEach(Batch::close);
    }

    @Test
    void batchesThatAreAlreadyLoadedAreTakenInOrderAndTheirColumnsAreAnUnmodifiableList() throws IOException {
        TestShards.writeImages(dir, 40);
        try (GdsLoader loader = GdsLoader.builder(dir).batchSize(4).path(ReadPath.HOST).prefetchDepth(3).build()) {
            long expected = 0;
            for (Batch b : loader) {
                assertEquals(expected++, b.index());
                List<ColumnView> columns = b.columns();
                assertEquals(loader.dataset().columns().size(), columns.size());
                assertTrue(columns instanceof java.util.RandomAccess);
                assertThrows(UnsupportedOperationException.class, () -> columns.set(0, columns.get(0)));
                assertThrows(UnsupportedOperationException.class, () -> columns.remove(0));
                assertThrows(IndexOutOfBoundsException.class, () -> columns.get(columns.size()));
                assertEquals(columns, List.copyOf(columns));
                b.close();
            }
            assertEquals(10, expected);
        }
    }
}
