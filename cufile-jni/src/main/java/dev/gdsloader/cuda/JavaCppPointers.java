package dev.gdsloader.cuda;

import org.bytedeco.cuda.cudart.CUstream_st;
import org.bytedeco.javacpp.FloatPointer;
import org.bytedeco.javacpp.Pointer;

/**
 * JavaCPP {@link Pointer}s over raw addresses owned elsewhere (device memory from JCuda's {@code cudaMalloc},
 * a stream from JCuda's {@code cudaStreamCreate}), for the bytedeco bindings (cuFile here; cuBLAS in the samples). JCuda and the
 * bytedeco libraries share the device's primary context, so a device pointer or stream from one is valid in
 * the other. These pointers own nothing and free nothing; the memory or stream must outlive the call they are
 * passed to. Stateless and thread-safe.
 */
public final class JavaCppPointers {
    private JavaCppPointers() {
    }

    /**
     * @param address a native address (host or device), not freed by the returned pointer
     * @return a non-owning JavaCPP pointer to {@code address}
     */
    public static Pointer at(long address) {
        return new Borrowed(address);
    }

    /**
     * @param address the address of float data (host or device)
     * @return a non-owning JavaCPP float pointer to it
     */
    public static FloatPointer floats(long address) {
        return new FloatPointer(at(address));
    }

    /**
     * @param stream a stream owned by the caller
     * @return the same {@code cudaStream_t} as a bytedeco {@link CUstream_st}, not owning it
     */
    public static CUstream_st stream(CudaStream stream) {
        return new CUstream_st(at(stream.address()));
    }

    private static final class Borrowed extends Pointer {
        Borrowed(long address) {
            this.address = address;
        }
    }
}
