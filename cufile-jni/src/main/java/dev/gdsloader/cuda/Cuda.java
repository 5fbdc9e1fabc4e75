package dev.gdsloader.cuda;

import jcuda.runtime.JCuda;
import jcuda.runtime.cudaError;

/**
 * Entry point to the CUDA runtime through JCuda: loads it once, says whether CUDA can be used here,
 * and turns error codes into {@link CudaException}s carrying the CUDA error name.
 *
 * <p>JCuda's native library links the CUDA runtime statically and needs the driver
 * ({@code libcuda.so.1}). On a machine with no driver or no GPU the first call to {@link #ensure()}
 * fails with one clear message and every later call repeats it; nothing crashes the JVM.
 *
 * <p>Thread-safe: loading happens once under the class-initialisation lock.
 */
public final class Cuda {
    private Cuda() {
    }

    private static final class State {
        static final CudaAvailability AVAILABILITY = probe();
    }

    /**
     * Says whether CUDA can be used in this process, probing once (JCuda load, driver version, device
     * count). Never throws.
     *
     * @return the cached probe result
     */
    public static CudaAvailability availability() {
        return State.AVAILABILITY;
    }

    /**
     * Makes sure CUDA is usable before a CUDA call.
     *
     * @throws CudaException with code {@link CudaException#UNAVAILABLE} when CUDA cannot be used here
     */
    public static void ensure() {
        CudaAvailability a = availability();
        if (!a.available()) {
            throw new CudaException(a.reason(), null);
        }
    }

    /**
     * Checks a {@code cudaError_t} returned by a JCuda call.
     *
     * @param code the value JCuda returned
     * @param call what was called, with its arguments, for the message
     * @throws CudaException if {@code code != cudaSuccess}
     */
    public static void check(int code, String call) {
        if (code != cudaError.cudaSuccess) {
            throw new CudaException(call, code, errorName(code));
        }
    }

    /**
     * @param code a {@code cudaError_t} value
     * @return its symbolic name, e.g. {@code cudaErrorNoDevice}
     */
    public static String errorName(int code) {
        String s = cudaError.stringFor(code);
        return s == null || s.startsWith("INVALID") ? "cudaError" + code : s;
    }

    /**
     * Whether the driver library itself loads, asked of the dynamic linker (not read from JCuda's error text): where
     * JCuda's runtime fails to load, this says if the driver is what is missing.
     */
    // restricted (javac lint): libraryLookup loads a native library; the JVM checks native access at run time
    // (--enable-native-access, bin/jvm-flags)
    @SuppressWarnings("restricted")
    private static boolean driverLibraryLoads() {
        try (java.lang.foreign.Arena a = java.lang.foreign.Arena.ofConfined()) {
            java.lang.foreign.SymbolLookup.libraryLookup("libcuda.so.1", a);
            return true;
        } catch (IllegalArgumentException | IllegalCallerException e) {
            return false;
        }
    }

    private static CudaAvailability probe() {
        try {
            JCuda.setExceptionsEnabled(false);
            JCuda.initialize();
        } catch (Throwable t) {
            String why = !driverLibraryLoads()
                    ? "no NVIDIA driver: JCuda's native runtime could not be loaded (libcuda.so.1 missing?)"
                    : "JCuda native library failed to load: " + firstLine(String.valueOf(t.getMessage()));
            return CudaAvailability.unavailable(why);
        }
        int[] driver = {0};
        int[] runtime = {0};
        int[] count = {0};
        int rc = JCuda.cudaDriverGetVersion(driver);
        if (rc != cudaError.cudaSuccess) {
            return CudaAvailability.unavailable("cudaDriverGetVersion failed: " + errorName(rc));
        }
        JCuda.cudaRuntimeGetVersion(runtime);
        if (driver[0] == 0) {
            return CudaAvailability.unavailable("no NVIDIA driver is installed (cudaDriverGetVersion = 0)");
        }
        rc = JCuda.cudaGetDeviceCount(count);
        if (rc != cudaError.cudaSuccess) {
            return CudaAvailability.unavailable("no usable GPU: cudaGetDeviceCount failed with " + errorName(rc));
        }
        if (count[0] == 0) {
            return CudaAvailability.unavailable("no GPU: the driver reports 0 CUDA devices");
        }
        return new CudaAvailability(true, "ok", count[0], driver[0], runtime[0]);
    }

    private static String firstLine(String s) {
        int nl = s.indexOf('\n');
        return nl < 0 ? s : s.substring(0, nl);
    }
}
