package dev.gdsloader.samples;

import dev.gdsloader.cuda.Cuda;
import dev.gdsloader.cuda.CudaException;
import dev.gdsloader.cuda.CudaStream;
import dev.gdsloader.cuda.JavaCppPointers;
import dev.gdsloader.cuda.NativeResource;
import org.bytedeco.cuda.cublas.cublasContext;
import org.bytedeco.cuda.global.cublas;
import org.bytedeco.javacpp.FloatPointer;

/**
 * A cuBLAS handle bound to one {@link CudaStream} (the bytedeco binding of {@code libcublas.so}; on the GPU
 * machine cuBLAS 13), for single-precision matrix products on device memory given as raw device pointers (a
 * batch's {@code ColumnView.devicePointer()}, {@link dev.gdsloader.cuda.DeviceBuffer#address()}). The sample's own
 * use of cuBLAS ({@link GpuMlp}), not part of the bindings: it calls bytedeco's {@code cublas} directly, the binding
 * of the cuBLAS 13 the GPU machine has.
 *
 * <p>Matrices are column-major, as in BLAS: an {@code m x n} matrix with leading dimension {@code ld} has
 * element {@code (i, j)} at float index {@code i + j * ld}. A row-major {@code r x c} array is the column-major
 * {@code c x r} transpose with {@code ld = c}. Every call is enqueued on the stream and returns before it runs;
 * scalars are read from the host at the call ({@code CUBLAS_POINTER_MODE_HOST}).
 *
 * <p>Owns the handle; {@link #close()} destroys it once. Not thread-safe: one thread enqueues (cuBLAS's own
 * rule for a handle).
 */
final class Cublas extends NativeResource {
    private final cublasContext handle = new cublasContext();
    /** Host scalars, read by cuBLAS when a call is enqueued; owned here and freed with the handle. */
    private final FloatPointer alpha = new FloatPointer(1);
    private final FloatPointer beta = new FloatPointer(1);

    private Cublas(CudaStream stream) {
        int rc;
        try {
            rc = cublas.cublasCreate_v2(handle);
        } catch (RuntimeException | Error e) { // e.g. libcublas failing to load: the scalars are ours to free
            freeScalars();
            throw e;
        }
        if (rc != cublas.CUBLAS_STATUS_SUCCESS) {
            freeScalars();
            throw new CudaException("cublasCreate", rc, statusName(rc));
        }
        rc = cublas.cublasSetStream_v2(handle, JavaCppPointers.stream(stream));
        if (rc != cublas.CUBLAS_STATUS_SUCCESS) {
            cublas.cublasDestroy_v2(handle);
            freeScalars();
            throw new CudaException("cublasSetStream", rc, statusName(rc));
        }
        trackLeaks();
    }

    /**
     * Creates a handle on the current device whose calls run on {@code stream}.
     *
     * @param stream the stream to enqueue on; must outlive the handle
     * @return the handle, owned by the caller
     * @throws CudaException if cuBLAS cannot be loaded ({@link CudaException#UNAVAILABLE}, naming the library)
     *     or the handle cannot be created
     */
    static Cublas create(CudaStream stream) {
        Cuda.ensure();
        try {
            return new Cublas(stream);
        } catch (LinkageError e) {
            throw new CudaException("cuBLAS (libcublas.so.13) cannot be loaded: " + e.getMessage(), e);
        }
    }

    /**
     * {@code C = alpha * op(A) * op(B) + beta * C} ({@code cublasSgemm}), column-major, where {@code op(A)} is
     * {@code m x k}, {@code op(B)} is {@code k x n} and {@code C} is {@code m x n}.
     *
     * @param transA use {@code A}'s transpose
     * @param transB use {@code B}'s transpose
     * @param m rows of {@code op(A)} and {@code C}
     * @param n columns of {@code op(B)} and {@code C}
     * @param k columns of {@code op(A)}, rows of {@code op(B)}
     * @param alphaValue scale of the product
     * @param a device pointer to {@code A} (floats)
     * @param lda leading dimension of {@code A}
     * @param b device pointer to {@code B}
     * @param ldb leading dimension of {@code B}
     * @param betaValue scale of {@code C}'s old value (0 overwrites, ignoring what {@code C} held)
     * @param c device pointer to {@code C}
     * @param ldc leading dimension of {@code C}
     * @throws CudaException if cuBLAS refuses the arguments (e.g. {@code CUBLAS_STATUS_INVALID_VALUE})
     * @throws IllegalArgumentException if a dimension is negative or a pointer is 0 (checked here, before the
     *     call; whether the pointers address enough device memory cannot be checked and is the caller's duty)
     * @throws IllegalStateException if the handle is closed
     */
    void sgemm(boolean transA, boolean transB, int m, int n, int k, float alphaValue, long a, int lda, long b,
                      int ldb, float betaValue, long c, int ldc) {
        checkOpen();
        checkArgs("cublasSgemm", m, n, k, a, b, c);
        alpha.put(alphaValue);
        beta.put(betaValue);
        check(cublas.cublasSgemm_v2(handle, op(transA), op(transB), m, n, k, alpha, JavaCppPointers.floats(a), lda,
                JavaCppPointers.floats(b), ldb, beta, JavaCppPointers.floats(c), ldc), "cublasSgemm");
    }

    private static void checkArgs(String call, int m, int n, int k, long p, long q, long r) {
        if (m < 0 || n < 0 || k < 0 || p == 0 || q == 0 || r == 0) {
            throw new IllegalArgumentException(call + " needs dimensions >= 0 and non-null device pointers, got m=" + m
                    + " n=" + n + " k=" + k + " pointers 0x" + Long.toHexString(p) + ", 0x" + Long.toHexString(q) + ", 0x"
                    + Long.toHexString(r));
        }
    }

    private static int op(boolean transpose) {
        return transpose ? cublas.CUBLAS_OP_T : cublas.CUBLAS_OP_N;
    }

    private static void check(int rc, String call) {
        if (rc != cublas.CUBLAS_STATUS_SUCCESS) {
            throw new CudaException(call, rc, statusName(rc));
        }
    }

    private static String statusName(int rc) {
        return cublas.cublasGetStatusString(rc).getString();
    }

    @Override
    protected void free() {
        cublas.cublasDestroy_v2(handle);
        freeScalars();
    }

    private void freeScalars() {
        alpha.close();
        beta.close();
    }

    @Override
    protected String describe() {
        return "cuBLAS handle";
    }
}
