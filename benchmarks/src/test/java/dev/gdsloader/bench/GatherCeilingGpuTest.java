package dev.gdsloader.bench;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import dev.gdsloader.cuda.Cuda;
import dev.gdsloader.cuda.CudaDevice;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/** {@link GatherCeiling} on a real GPU: a measurement whose last batch is byte-exact, with consistent units. */
@Tag("gpu")
class GatherCeilingGpuTest {
    @BeforeAll
    static void needsGpu() {
        assumeTrue(Cuda.availability().available(), () -> "no GPU: " + Cuda.availability().reason());
        CudaDevice.makeCurrent(0);
    }

    @ParameterizedTest(name = "{0} B records, {1} per launch, {2} buffers")
    @CsvSource({"784, 20000, 1", "784, 20000, 4", "4096, 4096, 3", "65536, 256, 1", "13, 1000, 4"})
    void measuresAByteExactGather(long recordBytes, int batch, int destinations) {
        GatherCeiling.Result r = GatherCeiling.measure(recordBytes, batch, 64L << 20, 1, destinations);
        assertEquals(destinations, r.destinations(), r.toString());
        assertTrue(r.byteExact(), r.toString());
        assertEquals((64L << 20) / recordBytes, r.sourceRecords(), r.toString());
        assertEquals(Math.min(batch, r.sourceRecords()), r.batchRecords(), r.toString());
        assertTrue(r.gigabytesPerSecond() > 0 && r.epochs() >= 1, r.toString());
        assertEquals(r.recordsPerSecond() * recordBytes / 1e9, r.gigabytesPerSecond(), r.gigabytesPerSecond() * 1e-9, r.toString());
    }
}
