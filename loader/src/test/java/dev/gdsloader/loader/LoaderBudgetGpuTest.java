package dev.gdsloader.loader;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import dev.gdsloader.cuda.Cuda;
import dev.gdsloader.cuda.CudaDevice;
import dev.gdsloader.memory.MemoryUsage;
import dev.gdsloader.memory.NativeAllocator;
import java.io.IOException;
import java.nio.file.Path;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** A bounce-path loader's device and pinned slot memory is charged to its allocator; skipped without a GPU. */
@Tag("gpu")
class LoaderBudgetGpuTest {
    @TempDir
    Path dir;

    @BeforeAll
    static void needsGpu() {
        assumeTrue(Cuda.availability().available(), () -> "no GPU: " + Cuda.availability().reason());
        CudaDevice.makeCurrent(0);
    }

    @Test
    void aBouncePathLoaderHoldsDeviceAndPinnedMemoryUntilClose() throws IOException {
        TestShards.writeImages(dir, 300, 200);
        try (NativeAllocator parent = NativeAllocator.root().newChild("gpu loader parent", 1L << 30, 1L << 30)) {
            try (GdsLoader loader = GdsLoader.builder(dir).batchSize(64).path(ReadPath.BOUNCE).prefetchDepth(3)
                    .allocator(parent).build()) {
                MemoryUsage m = loader.stats().memory();
                assertTrue(m.device() >= 3L * 64 * TestShards.IMAGE_BYTES, m.toString());
                assertTrue(m.pinned() > 0, m.toString());
                assertEquals(0, m.host(), m.toString());
                assertEquals(m.outstandingBytes(), parent.outstandingBytes());
                for (Batch b : loader) {
                    b.close();
                }
            }
            assertEquals(0, parent.outstandingBytes());
        }
    }
}
