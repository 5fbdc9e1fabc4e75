package dev.gdsloader.cuda;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.lang.foreign.ValueLayout;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/** NVRTC-compiled kernels on a real GPU, checked against the same arithmetic in Java. */
@Tag("gpu")
class KernelsGpuTest {
    private static final String SCALE = """
            extern "C" __global__ void scale(float* x, long long n, double factor) {
                for (long long i = blockIdx.x * (long long) blockDim.x + threadIdx.x; i < n;
                     i += (long long) gridDim.x * blockDim.x) {
                    x[i] = x[i] * (float) factor;
                }
            }
            """;

    @BeforeAll
    static void needsGpu() {
        assumeTrue(Cuda.availability().available(), () -> "no GPU: " + Cuda.availability().reason());
        CudaDevice.makeCurrent(0);
    }

    @Test
    void anNvrtcKernelRunsOnTheStream() {
        int n = 100_003;
        float[] x = new float[n];
        for (int i = 0; i < n; i++) {
            x[i] = i * 0.25f;
        }
        String ptx = Nvrtc.compileToPtx(SCALE, "scale.cu", "--gpu-architecture=compute_90");
        assertTrue(ptx.contains(".entry scale"), ptx.lines().limit(20).toList().toString());
        try (CudaModule m = CudaModule.load(ptx); CudaStream s = CudaStream.create();
             PinnedBuffer host = PinnedBuffer.allocate(4L * n); DeviceBuffer dev = DeviceBuffer.allocate(4L * n)) {
            host.segment().copyFrom(java.lang.foreign.MemorySegment.ofArray(x));
            s.copyToDevice(dev, 0, host, 0, 4L * n);
            m.launch("scale", 64, 256, s, dev.address(), n, Double.doubleToRawLongBits(-3.0));
            s.copyToHost(host, 0, dev, 0, 4L * n);
            s.synchronize();
            float[] got = host.segment().toArray(ValueLayout.JAVA_FLOAT);
            for (int i = 0; i < n; i++) {
                assertEquals(x[i] * -3f, got[i], 0f, "element " + i);
            }
        }
    }

    @Test
    void aCompileErrorCarriesNvrtcsLog() {
        CudaException e = assertThrows(CudaException.class,
                () -> Nvrtc.compileToPtx("extern \"C\" __global__ void k() { undefined_thing(); }", "bad.cu"));
        assertTrue(e.getMessage().contains("bad.cu") && e.getMessage().contains("undefined_thing"), e.getMessage());
    }
}
