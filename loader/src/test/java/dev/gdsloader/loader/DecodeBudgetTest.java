package dev.gdsloader.loader;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.gdsloader.loader.path.ReadPath;
import dev.gdsloader.memory.MemoryBudgetException;
import java.lang.foreign.ValueLayout;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Iterator;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A deflated {@code .npz} member is decoded on the host into memory charged to the loader's budget (issue 21,
 * finding 10: a 1.5 MB archive made {@code checksum} use 7.6 GB): a member whose declared decoded size does not fit
 * is refused naming the archive, before it is inflated; one that fits loads.
 */
class DecodeBudgetTest {
    private static final Duration HANG_GUARD = Duration.ofSeconds(60);
    private static final int RECORDS = 2000; // images.npy deflated: 2000 x 784 = 1,568,000 decoded bytes

    @TempDir
    Path dir;

    @Test
    void aDecodeLargerThanTheLoadersBudgetIsRefusedNamingTheArchive() throws Exception {
        List<Path> archives = TestShards.writeMixedNpz(dir, RECORDS);
        assertTimeoutPreemptively(HANG_GUARD, () -> {
            try (GdsLoader loader = GdsLoader.builder(dir).batchSize(4).path(ReadPath.HOST).prefetchDepth(2)
                    .memoryLimit(1 << 20).build()) {
                Iterator<Batch> it = loader.iterator();
                IllegalStateException e = assertThrows(IllegalStateException.class, it::next);
                MemoryBudgetException cause = assertInstanceOf(MemoryBudgetException.class, e.getCause());
                assertTrue(cause.getMessage().contains("host decode of " + archives.get(0)), cause.getMessage());
            }
        });
    }

    @Test
    void aDecodeThatFitsTheBudgetLoads() throws Exception {
        TestShards.writeMixedNpz(dir, RECORDS);
        assertTimeoutPreemptively(HANG_GUARD, () -> {
            try (GdsLoader loader = GdsLoader.builder(dir).batchSize(4).path(ReadPath.HOST).prefetchDepth(2)
                    .memoryLimit(4 << 20).build(); Batch b = loader.iterator().next()) {
                assertArrayEquals(TestShards.images(0, 4), b.column("images").hostSegment().toArray(ValueLayout.JAVA_BYTE));
            }
        });
    }
}
