package dev.gdsloader.service.client;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;

import dev.gdsloader.loader.path.ReadPath;
import dev.gdsloader.memory.IllegalReferenceCountException;
import dev.gdsloader.service.ServiceShards;
import dev.gdsloader.service.ServiceTestBase;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.Iterator;
import org.junit.jupiter.api.Test;

/**
 * A received batch keeps a local {@code Batch}'s contract (HOST delivery, a real server): reference counted, a release
 * past zero throws, every accessor of a released batch throws, and a host view handed out before the release throws
 * when read instead of reading the Arrow memory freed with the batch.
 */
class RemoteBatchContractTest extends ServiceTestBase {
    private PrefetchClient open() {
        return PrefetchClient.builder("127.0.0.1", server.port()).dataset("train").batchSize(8).path(ReadPath.HOST)
                .timeout(Duration.ofSeconds(30)).open();
    }

    /** Reads the rest of the epoch, so the server's session ends normally. */
    private static void drain(Iterator<RemoteBatch> it) {
        while (it.hasNext()) {
            it.next().close();
        }
    }

    @Test
    void aSecondCloseThrowsAndWhatTheBatchIsStaysReadable() {
        try (PrefetchClient c = open()) {
            Iterator<RemoteBatch> it = c.iterator();
            RemoteBatch b = it.next();
            long[] records = b.recordIndices();
            b.close();
            assertEquals(0, b.refCount());
            var e = assertThrows(IllegalReferenceCountException.class, b::close);
            assertEquals(b + " was already released (released more often than retained)", e.getMessage());
            assertArrayEquals(records, b.recordIndices(), "what the batch is stays readable");
            assertEquals(0, b.epoch());
            b.state();
            drain(it);
        }
    }

    @Test
    void everyAccessorAndEveryViewHandedOutThrowsAfterTheRelease() {
        try (PrefetchClient c = open()) {
            Iterator<RemoteBatch> it = c.iterator();
            RemoteBatch b = it.next();
            RemoteColumn x = b.column("x");
            ByteBuffer view = x.hostBuffer();
            byte[] before = x.toByteArray();
            assertArrayEquals(ServiceShards.expected("x", b.recordIndices()), before);
            b.close();
            assertThrows(IllegalReferenceCountException.class, b::columns);
            assertThrows(IllegalReferenceCountException.class, () -> b.column("x"));
            assertThrows(IllegalReferenceCountException.class, x::hostBuffer);
            assertThrows(IllegalReferenceCountException.class, x::toByteArray);
            assertThrows(IllegalReferenceCountException.class, b::retain);
            assertThrows(IllegalStateException.class, () -> view.get(0), "a view over freed memory is not readable");
            assertThrows(IllegalStateException.class, () -> view.duplicate().get(new byte[before.length]));
            drain(it);
        }
    }

    @Test
    void aRetainedBatchIsReleasedByItsLastOwner() {
        try (PrefetchClient c = open()) {
            Iterator<RemoteBatch> it = c.iterator();
            RemoteBatch b = it.next();
            assertSame(b, b.retain());
            assertEquals(2, b.refCount());
            b.close();
            assertEquals(1, b.refCount());
            assertArrayEquals(ServiceShards.expected("y", b.recordIndices()), b.column("y").toByteArray(), "still held");
            b.close();
            assertThrows(IllegalReferenceCountException.class, () -> b.column("y"));
            assertThrows(IllegalReferenceCountException.class, b::close);
            drain(it);
        }
    }

    @Test
    void closingTheClientReleasesARetainedBatch() {
        PrefetchClient c = open();
        RemoteBatch b = c.iterator().next().retain();
        ByteBuffer view = b.column("x").hostBuffer();
        c.close();
        assertEquals(0, b.refCount());
        assertThrows(IllegalStateException.class, () -> view.get(0));
        assertThrows(IllegalReferenceCountException.class, b::close);
    }
}
