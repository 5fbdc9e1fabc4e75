package dev.gdsloader.loader.gather;

import dev.gdsloader.cuda.Cuda;
import dev.gdsloader.cuda.CudaDevice;
import dev.gdsloader.cuda.CudaStream;
import dev.gdsloader.cuda.DeviceBuffer;
import dev.gdsloader.cuda.PinnedBuffer;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.Random;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * {@link GatherKernel} on a real GPU: random records of pinned host memory, read by the kernel through its
 * device-side address, gathered into device memory and copied back, byte for byte against the source, for record
 * sizes that take each of its load widths (16-byte, 4-byte, single bytes) and source offsets that break the alignment.
 */
@Tag("gpu")
class GatherKernelGpuTest {
    private static GatherKernel kernel;

    @BeforeAll
    static void needsGpu() {
        assumeTrue(Cuda.availability().available(), () -> "no GPU: " + Cuda.availability().reason());
        CudaDevice.makeCurrent(0);
        kernel = GatherKernel.load();
    }

    @AfterAll
    static void unload() {
        if (kernel != null) {
            kernel.close();
        }
    }

    @ParameterizedTest(name = "{0} B records at source offset {1}, {2} of them")
    @CsvSource({"784, 0, 5000", "4096, 0, 3000", "65536, 0, 300", "784, 4, 2000", "13, 0, 7001", "4096, 1, 500", "1, 0, 100003"})
    void gathersRandomRecordsByteExact(int recordBytes, int sourceOffset, int n) {
        int sourceRecords = 2 * n + 17;
        long sourceBytes = sourceOffset + (long) sourceRecords * recordBytes;
        Random rnd = new Random(recordBytes * 31L + sourceOffset);
        byte[] source = new byte[(int) sourceBytes];
        rnd.nextBytes(source);
        long[] picked = new long[n];
        for (int i = 0; i < n; i++) {
            picked[i] = rnd.nextInt(sourceRecords);
        }
        try (PinnedBuffer src = PinnedBuffer.allocate(sourceBytes); PinnedBuffer addrs = PinnedBuffer.allocate(8L * n);
             DeviceBuffer devAddrs = DeviceBuffer.allocate(8L * n); DeviceBuffer dst = DeviceBuffer.allocate((long) n * recordBytes);
             PinnedBuffer back = PinnedBuffer.allocate((long) n * recordBytes); CudaStream s = CudaStream.create()) {
            src.segment().copyFrom(MemorySegment.ofArray(source));
            long base = src.devicePointer() + sourceOffset;
            for (int i = 0; i < n; i++) {
                addrs.segment().setAtIndex(ValueLayout.JAVA_LONG, i, base + picked[i] * recordBytes);
            }
            dst.fill(0xA5);
            s.copyToDevice(devAddrs, 0, addrs, 0, 8L * n);
            kernel.launchRecords(devAddrs.address(), dst.address(), recordBytes, n, s);
            s.copyToHost(back, 0, dst, 0, (long) n * recordBytes);
            s.synchronize();
            byte[] got = back.segment().toArray(ValueLayout.JAVA_BYTE);
            for (int i = 0; i < n; i++) {
                int from = (int) (sourceOffset + picked[i] * recordBytes);
                for (int k = 0; k < recordBytes; k++) {
                    if (got[i * recordBytes + k] != source[from + k]) {
                        assertEquals(source[from + k], got[i * recordBytes + k], "record " + i + " (source record "
                                + picked[i] + "), byte " + k);
                    }
                }
            }
        }
    }

    @ParameterizedTest(name = "recordBytes {0}, n {1}")
    @CsvSource({"0, 1", "-4, 1", "16, -1", "4611686018427387904, 4"})
    void refusesBadArguments(long recordBytes, long n) {
        try (CudaStream s = CudaStream.create()) {
            assertThrows(IllegalArgumentException.class, () -> kernel.launchRecords(0, 0, recordBytes, n, s));
        }
    }
}
