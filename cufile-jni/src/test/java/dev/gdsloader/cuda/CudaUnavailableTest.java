package dev.gdsloader.cuda;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeFalse;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.function.Executable;

/**
 * The CUDA layer on a machine without a GPU: one clear reason, and every entry point fails with a
 * {@link CudaException} of code {@link CudaException#UNAVAILABLE} instead of crashing. Skipped where CUDA works.
 */
class CudaUnavailableTest {

    private static void assumeNoGpu() {
        assumeFalse(Cuda.availability().available(), "CUDA is available here; these tests are for machines without a GPU");
    }

    private static void assertUnavailable(Executable call) {
        CudaException e = assertThrows(CudaException.class, call);
        assertEquals(CudaException.UNAVAILABLE, e.code());
        assertEquals("unavailable", e.errorName());
        assertTrue(e.getMessage().startsWith("CUDA is not available: "), e.getMessage());
        assertTrue(e.getMessage().endsWith(Cuda.availability().reason()), e.getMessage());
    }

    @Test
    void availabilityIsFalseWithAOneLineReasonAndNoDevices() {
        assumeNoGpu();
        CudaAvailability a = Cuda.availability();
        assertFalse(a.available());
        assertFalse(a.reason().isBlank(), "reason must say why");
        assertFalse(a.reason().contains("\n"), "reason is one line: " + a.reason());
        assertFalse(a.reason().equals("ok"));
        assertEquals(0, a.deviceCount());
        assertSame(a, Cuda.availability(), "probed once and cached");
    }

    @Test
    void deviceBufferAllocationFailsAsUnavailable() {
        assumeNoGpu();
        assertUnavailable(() -> DeviceBuffer.allocate(4096));
    }

    @Test
    void pinnedBufferAllocationFailsAsUnavailable() {
        assumeNoGpu();
        assertUnavailable(() -> PinnedBuffer.allocate(4096));
    }

    @Test
    void streamCreationFailsAsUnavailable() {
        assumeNoGpu();
        assertUnavailable(CudaStream::create);
    }

    @Test
    void eventCreationFailsAsUnavailable() {
        assumeNoGpu();
        assertUnavailable(CudaEvent::create);
    }

    @Test
    void deviceQueriesFailAsUnavailable() {
        assumeNoGpu();
        assertUnavailable(Cuda::ensure);
        assertUnavailable(CudaDevice::count);
        assertUnavailable(() -> CudaDevice.get(0));
        assertUnavailable(() -> CudaDevice.makeCurrent(0));
        assertUnavailable(CudaDevice::memoryInfo);
    }

    @Test
    void nonPositiveSizesAreRejectedBeforeCudaIsConsulted() {
        IllegalArgumentException d = assertThrows(IllegalArgumentException.class, () -> DeviceBuffer.allocate(0));
        assertTrue(d.getMessage().contains("0"), d.getMessage());
        assertThrows(IllegalArgumentException.class, () -> DeviceBuffer.allocate(-1));
        assertThrows(IllegalArgumentException.class, () -> PinnedBuffer.allocate(0));
    }

    @Test
    void cudaErrorCodesAreNamedAndChecked() {
        assertEquals("cudaErrorMemoryAllocation", Cuda.errorName(2));
        Cuda.check(0, "cudaSuccess is not an error");
        CudaException e = assertThrows(CudaException.class, () -> Cuda.check(2, "cudaMalloc(42 bytes)"));
        assertEquals(2, e.code());
        assertEquals("cudaErrorMemoryAllocation", e.errorName());
        assertEquals("cudaMalloc(42 bytes) failed: cudaErrorMemoryAllocation (2)", e.getMessage());
    }

    @Test
    void versionsFormatAsMajorDotMinor() {
        assertEquals("13.0", CudaAvailability.format(13000));
        assertEquals("12.6", CudaAvailability.format(12060));
        assertEquals("n/a", CudaAvailability.format(0));
    }
}
