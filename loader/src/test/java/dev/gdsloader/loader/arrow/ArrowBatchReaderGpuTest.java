package dev.gdsloader.loader.arrow;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import dev.gdsloader.cuda.Cuda;
import dev.gdsloader.cuda.CudaDevice;
import dev.gdsloader.cufile.CuFileProbe;
import dev.gdsloader.cufile.CuFileStatus;
import dev.gdsloader.loader.PathTaken;
import dev.gdsloader.loader.ReadPath;
import java.nio.file.Path;
import java.util.Optional;
import java.util.stream.Stream;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DynamicTest;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.TestFactory;

/**
 * {@link ArrowBatchReader} in GPU memory: on the BOUNCE and GDS paths every buffer of every batch of the pyarrow
 * fixtures, downloaded from the device, equals the writer's values and the file's bytes at the layout's extents
 * (decoded on the host for LZ4/ZSTD bodies).
 */
@Tag("gpu")
class ArrowBatchReaderGpuTest {
    @BeforeAll
    static void needsGpu() {
        assumeTrue(Cuda.availability().available(), () -> "no GPU: " + Cuda.availability().reason());
        CudaDevice.makeCurrent(0);
    }

    @TestFactory
    Stream<DynamicTest> bounceDeliversEveryBufferToTheDevice() {
        return ArrowBatchChecks.fixtures().stream().map(f -> DynamicTest.dynamicTest(f.getFileName().toString(), () -> {
            try (ArrowBatchReader r = ArrowBatchReader.open(f, ReadPath.BOUNCE)) {
                assertEquals(PathTaken.BOUNCE, r.path());
                assertEquals(r.batchCount(), ArrowBatchChecks.checkFixture(f, r));
            }
        }));
    }

    @TestFactory
    Stream<DynamicTest> gdsDeliversEveryBufferToTheDevice() {
        return ArrowBatchChecks.fixtures().stream().map(f -> DynamicTest.dynamicTest(f.getFileName().toString(), () -> {
            Path dir = f.toAbsolutePath().getParent();
            CuFileStatus st = CuFileProbe.probe(Optional.of(dir));
            assumeTrue(st.usable(), () -> "cuFile unusable here: " + st.reason());
            try (ArrowBatchReader r = ArrowBatchReader.open(f, ReadPath.GDS)) {
                assertTrue(r.path() == PathTaken.GDS || r.path() == PathTaken.CUFILE_COMPAT, r.path().toString());
                assertEquals(r.batchCount(), ArrowBatchChecks.checkFixture(f, r));
            }
        }));
    }
}
