package dev.gdsloader.cuda;

import org.bytedeco.cuda.global.nvrtc;
import org.bytedeco.cuda.nvrtc._nvrtcProgram;
import org.bytedeco.javacpp.BytePointer;
import org.bytedeco.javacpp.PointerPointer;
import org.bytedeco.javacpp.SizeTPointer;

/**
 * Run-time compilation of CUDA C++ to PTX with NVRTC (the bytedeco binding of {@code libnvrtc.so}; on the GPU
 * machine NVRTC 13.0), for {@link CudaModule#load(String)}. Kernels are then compiled for the device the
 * module is loaded on by the driver. Stateless and thread-safe (each call owns its NVRTC program and destroys
 * it before returning).
 */
public final class Nvrtc {
    private Nvrtc() {
    }

    /**
     * Compiles one CUDA C++ translation unit to PTX text.
     *
     * @param source CUDA C++ source; kernels meant for {@link CudaModule#launch} are {@code extern "C"} and take
     *     only 64-bit parameters (pointers, {@code long long}, {@code double})
     * @param name the source's name in diagnostics, e.g. {@code "mlp.cu"}
     * @param options NVRTC options, e.g. {@code "--gpu-architecture=compute_90"}, {@code "-default-device"}
     * @return the PTX text
     * @throws CudaException if NVRTC cannot be loaded ({@link CudaException#UNAVAILABLE}, naming the library),
     *     or compilation fails (with NVRTC's log)
     */
    public static String compileToPtx(String source, String name, String... options) {
        try {
            return compile(source, name, options);
        } catch (LinkageError e) {
            throw new CudaException("NVRTC (libnvrtc.so.13) cannot be loaded: " + e.getMessage(), e);
        }
    }

    /**
     * @return NVRTC's version as {@code {major, minor}}
     * @throws CudaException if NVRTC cannot be loaded
     */
    public static int[] version() {
        try {
            int[] major = new int[1];
            int[] minor = new int[1];
            check(nvrtc.nvrtcVersion(major, minor), "nvrtcVersion");
            return new int[] {major[0], minor[0]};
        } catch (LinkageError e) {
            throw new CudaException("NVRTC (libnvrtc.so.13) cannot be loaded: " + e.getMessage(), e);
        }
    }

    private static String compile(String source, String name, String... options) {
        _nvrtcProgram program = new _nvrtcProgram();
        // the native strings live until the program is destroyed, and are freed here, not by the GC
        try (BytePointer src = new BytePointer(source); BytePointer srcName = new BytePointer(name)) {
            check(nvrtc.nvrtcCreateProgram(program, src, srcName, 0, (PointerPointer<?>) null, (PointerPointer<?>) null),
                    "nvrtcCreateProgram(" + name + ")");
            try (PointerPointer<BytePointer> opts = new PointerPointer<>(options); SizeTPointer size = new SizeTPointer(1)) {
                int rc = nvrtc.nvrtcCompileProgram(program, options.length, opts);
                if (rc != nvrtc.NVRTC_SUCCESS) {
                    throw new CudaException("nvrtcCompileProgram(" + name + "): " + log(program), rc, errorName(rc));
                }
                check(nvrtc.nvrtcGetPTXSize(program, size), "nvrtcGetPTXSize");
                byte[] ptx = new byte[(int) size.get()];
                check(nvrtc.nvrtcGetPTX(program, ptx), "nvrtcGetPTX");
                int end = ptx.length;
                while (end > 0 && ptx[end - 1] == 0) {
                    end--; // the PTX is NUL-terminated
                }
                return new String(ptx, 0, end, java.nio.charset.StandardCharsets.US_ASCII);
            } finally {
                nvrtc.nvrtcDestroyProgram(program);
            }
        }
    }

    private static String log(_nvrtcProgram program) {
        try (SizeTPointer size = new SizeTPointer(1)) {
            if (nvrtc.nvrtcGetProgramLogSize(program, size) != nvrtc.NVRTC_SUCCESS) {
                return "(no log)";
            }
            byte[] log = new byte[(int) size.get()];
            nvrtc.nvrtcGetProgramLog(program, log);
            return new String(log, java.nio.charset.StandardCharsets.UTF_8).trim();
        }
    }

    private static void check(int rc, String call) {
        if (rc != nvrtc.NVRTC_SUCCESS) {
            throw new CudaException(call, rc, errorName(rc));
        }
    }

    private static String errorName(int rc) {
        return nvrtc.nvrtcGetErrorString(rc).getString();
    }
}
