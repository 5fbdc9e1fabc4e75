package dev.gdsloader.cuda;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.lang.foreign.ValueLayout;
import java.util.Random;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/** The CUDA layer on a real GPU; skipped where there is none. */
@Tag("gpu")
class CudaGpuTest {
    @BeforeAll
    static void needsGpu() {
        assumeTrue(Cuda.availability().available(), () -> "no GPU: " + Cuda.availability().reason());
        CudaDevice.makeCurrent(0);
    }

    @Test
    void deviceReportsNameMemoryAndCopyEngines() {
        CudaDevice d = CudaDevice.get(0);
        assertFalse(d.name().isBlank());
        assertTrue(d.totalMemoryBytes() > 1L << 30, "device memory " + d.totalMemoryBytes());
        assertTrue(d.copyEngines() >= 1);
        assertTrue(Cuda.availability().driverVersion() >= 12000);
    }

    @Test
    void pinnedToDeviceAndBackIsByteExact() {
        int n = (3 << 20) + 123;
        byte[] data = new byte[n];
        new Random(7).nextBytes(data);
        try (PinnedBuffer src = PinnedBuffer.allocate(n);
             PinnedBuffer dst = PinnedBuffer.allocate(n);
             DeviceBuffer dev = DeviceBuffer.allocate(n + 4096);
             CudaStream s = CudaStream.create();
             CudaEvent done = CudaEvent.create()) {
            src.segment().copyFrom(java.lang.foreign.MemorySegment.ofArray(data));
            s.copyToDevice(dev, 4096, src, 0, n);
            s.copyToHost(dst, 0, dev, 4096, n);
            done.record(s);
            done.synchronize();
            assertArrayEquals(data, dst.segment().toArray(ValueLayout.JAVA_BYTE));
        }
    }

    @Test
    void streamWaitsForAnEventOfAnotherStream() {
        int n = 1 << 20;
        try (PinnedBuffer host = PinnedBuffer.allocate(n);
             DeviceBuffer a = DeviceBuffer.allocate(n);
             DeviceBuffer b = DeviceBuffer.allocate(n);
             CudaStream producer = CudaStream.create();
             CudaStream consumer = CudaStream.create();
             CudaEvent ready = CudaEvent.create()) {
            host.segment().fill((byte) 0x5a);
            producer.copyToDevice(a, 0, host, 0, n);
            ready.record(producer);
            consumer.waitFor(ready);
            consumer.copyDeviceToDevice(b, 0, a, 0, n);
            host.segment().fill((byte) 0);
            consumer.copyToHost(host, 0, b, 0, n);
            consumer.synchronize();
            for (long i = 0; i < n; i += 4096) {
                assertEquals((byte) 0x5a, host.segment().get(ValueLayout.JAVA_BYTE, i), "byte " + i);
            }
        }
    }

    @Test
    void outOfRangeCopiesAreRefusedBeforeCudaSeesThem() {
        try (PinnedBuffer host = PinnedBuffer.allocate(4096);
             DeviceBuffer dev = DeviceBuffer.allocate(4096);
             CudaStream s = CudaStream.create()) {
            assertThrows(IndexOutOfBoundsException.class, () -> s.copyToDevice(dev, 1, host, 0, 4096));
            assertThrows(IndexOutOfBoundsException.class, () -> s.copyToHost(host, 0, dev, -1, 10));
        }
    }

    @Test
    void freeingReturnsDeviceMemoryAndClosingTwiceIsHarmless() {
        long before = CudaDevice.memoryInfo()[0];
        DeviceBuffer big = DeviceBuffer.allocate(1L << 30);
        assertTrue(CudaDevice.memoryInfo()[0] <= before - (1L << 30) + (64L << 20));
        big.close();
        big.close();
        assertTrue(big.isClosed());
        assertThrows(IllegalStateException.class, big::address);
        assertTrue(Math.abs(CudaDevice.memoryInfo()[0] - before) < (64L << 20), "free memory back to its baseline");
    }

    @Test
    void absurdAllocationFailsWithTheCudaErrorName() {
        CudaException e = assertThrows(CudaException.class, () -> DeviceBuffer.allocate(1L << 50));
        assertTrue(e.getMessage().contains("cudaErrorMemoryAllocation"), e.getMessage());
        assertTrue(e.getMessage().contains("GPU memory"), e.getMessage());
    }
}
