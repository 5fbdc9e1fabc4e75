package dev.gdsloader.cuda;

import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.SymbolLookup;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.MethodHandle;

/**
 * Asynchronous copies through the CUDA driver API ({@code cuMemcpyHtoDAsync_v2}, {@code cuMemcpyDtoHAsync_v2}
 * in {@code libcuda.so.1}) called with raw addresses through the FFM API: the loader's per-chunk copy then
 * allocates nothing on the Java heap (JCuda needs a new {@code Pointer} object per offset). The runtime's
 * stream handle is the driver's {@code CUstream}, and the calling thread has the device's primary context
 * current (the loader's I/O threads set their device first), so both APIs see the same stream and memory.
 *
 * <p>Where {@code libcuda.so.1} or the symbols are missing, {@link #available()} is false and callers use JCuda.
 * Thread-safe.
 */
// restricted (javac lint): this class exists to bind C functions through FFM's restricted Linker API;
// the JVM checks native access at run time (--enable-native-access, bin/jvm-flags)
@SuppressWarnings("restricted")
final class DriverCopies {
    private static final MethodHandle HTOD;
    private static final MethodHandle DTOH;

    static {
        MethodHandle h = null;
        MethodHandle d = null;
        try {
            SymbolLookup lib = SymbolLookup.libraryLookup("libcuda.so.1", Arena.global());
            Linker linker = Linker.nativeLinker();
            FunctionDescriptor fd = FunctionDescriptor.of(ValueLayout.JAVA_INT, ValueLayout.JAVA_LONG, ValueLayout.JAVA_LONG,
                    ValueLayout.JAVA_LONG, ValueLayout.JAVA_LONG);
            h = lib.find("cuMemcpyHtoDAsync_v2").map(a -> linker.downcallHandle(a, fd)).orElse(null);
            d = lib.find("cuMemcpyDtoHAsync_v2").map(a -> linker.downcallHandle(a, fd)).orElse(null);
        } catch (IllegalArgumentException | UnsatisfiedLinkError e) {
            h = null;
            d = null;
        }
        HTOD = h;
        DTOH = d;
    }

    private DriverCopies() {
    }

    /** @return true when the driver's copy functions were found */
    static boolean available() {
        return HTOD != null && DTOH != null;
    }

    /**
     * @return the {@code CUresult} of {@code cuMemcpyHtoDAsync_v2(dst, src, bytes, stream)}
     */
    static int hostToDevice(long dst, long src, long bytes, long stream) {
        try {
            return (int) HTOD.invokeExact(dst, src, bytes, stream);
        } catch (Throwable t) {
            throw new IllegalStateException("cuMemcpyHtoDAsync_v2 failed: " + t, t);
        }
    }

    /**
     * @return the {@code CUresult} of {@code cuMemcpyDtoHAsync_v2(dst, src, bytes, stream)}
     */
    static int deviceToHost(long dst, long src, long bytes, long stream) {
        try {
            return (int) DTOH.invokeExact(dst, src, bytes, stream);
        } catch (Throwable t) {
            throw new IllegalStateException("cuMemcpyDtoHAsync_v2 failed: " + t, t);
        }
    }
}
