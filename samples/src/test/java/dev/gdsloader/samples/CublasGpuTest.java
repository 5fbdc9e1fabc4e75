package dev.gdsloader.samples;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import dev.gdsloader.cuda.Cuda;
import dev.gdsloader.cuda.CudaDevice;
import dev.gdsloader.cuda.CudaException;
import dev.gdsloader.cuda.CudaStream;
import dev.gdsloader.cuda.DeviceBuffer;
import dev.gdsloader.cuda.PinnedBuffer;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.Random;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/** The sample's cuBLAS matrix product on a real GPU, checked against the same arithmetic in Java. */
@Tag("gpu")
class CublasGpuTest {
    @BeforeAll
    static void needsGpu() {
        assumeTrue(Cuda.availability().available(), () -> "no GPU: " + Cuda.availability().reason());
        CudaDevice.makeCurrent(0);
    }

    @Test
    void sgemmMatchesJava() {
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
        long bytes = 4L * (a.length + b.length + c.length);
        try (CudaStream s = CudaStream.create(); Cublas blas = Cublas.create(s);
             PinnedBuffer host = PinnedBuffer.allocate(bytes); DeviceBuffer dev = DeviceBuffer.allocate(bytes)) {
            long da = dev.address();
            long db = da + 4L * a.length;
            long dc = db + 4L * b.length;
            MemorySegment seg = host.segment();
            seg.asSlice(0, 4L * a.length).copyFrom(MemorySegment.ofArray(a));
            seg.asSlice(4L * a.length, 4L * b.length).copyFrom(MemorySegment.ofArray(b));
            s.copyToDevice(dev, 0, host, 0, bytes);
            blas.sgemm(false, false, m, n, k, 2f, da, m, db, k, 0f, dc, m);
            s.copyToHost(host, 0, dev, 0, bytes);
            s.synchronize();
            float[] gotC = seg.asSlice(4L * (a.length + b.length), 4L * c.length).toArray(ValueLayout.JAVA_FLOAT);
            assertArrayEquals(c, gotC, 1e-4f);
            CudaException bad = assertThrows(CudaException.class, () -> blas.sgemm(false, false, m, n, k, 1f, da, 1, db, k, 0f, dc, m));
            assertTrue(bad.getMessage().contains("cublasSgemm"), bad.getMessage());
        }
    }
}
