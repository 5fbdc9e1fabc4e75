package dev.gdsloader.cuda;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.lang.foreign.ValueLayout;
import java.util.Random;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/** NVRTC-compiled kernels and cuBLAS on a real GPU, checked against the same arithmetic in Java. */
@Tag("gpu")
class KernelsAndBlasGpuTest {
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

    @Test
    void sgemmAndSgemvMatchJava() {
        int m = 37;
        int k = 53;
        int n = 29;
        Random r = new Random(3);
        float[] a = new float[m * k]; // column-major m x k
        float[] b = new float[k * n]; // column-major k x n
        for (int i = 0; i < a.length; i++) {
            a[i] = r.nextFloat() - 0.5f;
        }
        for (int i = 0; i < b.length; i++) {
            b[i] = r.nextFloat() - 0.5f;
        }
        float[] c = new float[m * n];
        for (int j = 0; j < n; j++) {
            for (int i = 0; i < m; i++) {
                double sum = 0;
                for (int p = 0; p < k; p++) {
                    sum += a[i + p * m] * b[p + j * k];
                }
                c[i + j * m] = (float) (2 * sum);
            }
        }
        float[] rowSums = new float[m]; // A . ones(k)
        for (int i = 0; i < m; i++) {
            for (int p = 0; p < k; p++) {
                rowSums[i] += a[i + p * m];
            }
        }
        long bytes = 4L * (a.length + b.length + c.length + k + m);
        try (CudaStream s = CudaStream.create(); Cublas blas = Cublas.create(s);
             PinnedBuffer host = PinnedBuffer.allocate(bytes); DeviceBuffer dev = DeviceBuffer.allocate(bytes)) {
            long da = dev.address();
            long db = da + 4L * a.length;
            long dc = db + 4L * b.length;
            long ones = dc + 4L * c.length;
            long y = ones + 4L * k;
            var seg = host.segment();
            seg.asSlice(0, 4L * a.length).copyFrom(java.lang.foreign.MemorySegment.ofArray(a));
            seg.asSlice(4L * a.length, 4L * b.length).copyFrom(java.lang.foreign.MemorySegment.ofArray(b));
            for (int i = 0; i < k; i++) {
                seg.setAtIndex(ValueLayout.JAVA_FLOAT, a.length + b.length + c.length + i, 1f);
            }
            s.copyToDevice(dev, 0, host, 0, bytes);
            blas.sgemm(false, false, m, n, k, 2f, da, m, db, k, 0f, dc, m);
            blas.sgemv(false, m, k, 1f, da, m, ones, 0f, y);
            s.copyToHost(host, 0, dev, 0, bytes);
            s.synchronize();
            float[] gotC = seg.asSlice(4L * (a.length + b.length), 4L * c.length).toArray(ValueLayout.JAVA_FLOAT);
            float[] gotY = seg.asSlice(4L * (a.length + b.length + c.length + k), 4L * m).toArray(ValueLayout.JAVA_FLOAT);
            assertArrayEquals(c, gotC, 1e-4f);
            assertArrayEquals(rowSums, gotY, 1e-4f);
            CudaException bad = assertThrows(CudaException.class, () -> blas.sgemm(false, false, m, n, k, 1f, da, 1, db, k, 0f, dc, m));
            assertTrue(bad.getMessage().contains("cublasSgemm"), bad.getMessage());
        }
    }
}
