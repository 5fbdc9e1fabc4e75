package dev.gdsloader.cuda;

import java.nio.charset.StandardCharsets;
import jcuda.Pointer;
import jcuda.driver.CUfunction;
import jcuda.driver.CUmodule;
import jcuda.driver.CUresult;
import jcuda.driver.CUstream;
import jcuda.driver.JCudaDriver;

/**
 * A module of GPU kernels loaded from PTX text ({@code cuModuleLoadData}; the driver compiles it for the
 * device), and launches of its kernels on a {@link CudaStream}. Unloaded once by {@link #close()}.
 *
 * <p>Load it on a thread whose current device is the one it will run on. Launches may come from any
 * thread using that device. Kernel arguments are passed as 64-bit values (device pointers or integers),
 * which is how the kernels written for it declare them ({@code .param .u64}).
 */
public final class CudaModule extends NativeResource {
    private final CUmodule module = new CUmodule();
    /** Kernels looked up so far, by name: a launch per batch should not look its kernel up again. */
    private final java.util.Map<String, CUfunction> functions = new java.util.concurrent.ConcurrentHashMap<>();

    private CudaModule(String ptx) {
        byte[] text = (ptx + "\0").getBytes(StandardCharsets.US_ASCII);
        int rc = JCudaDriver.cuModuleLoadData(module, text);
        if (rc != CUresult.CUDA_SUCCESS) {
            throw new CudaException("cuModuleLoadData(PTX, " + ptx.length() + " chars)", rc, CUresult.stringFor(rc));
        }
        trackLeaks();
    }

    /**
     * Loads PTX text on the current device. The driver API needs a current context: the runtime's primary context of
     * the current device is made current first ({@code cudaFree(0)}), so a thread that has not yet made a runtime
     * call (a fresh thread, or a process whose first CUDA work is this) does not get
     * {@code CUDA_ERROR_INVALID_CONTEXT}.
     *
     * @param ptx the PTX source
     * @return the module, owned by the caller
     * @throws CudaException if CUDA is unavailable or the driver rejects the PTX (the name of the error)
     */
    public static CudaModule load(String ptx) {
        Cuda.ensure();
        Cuda.check(jcuda.runtime.JCuda.cudaFree(new jcuda.Pointer()), "cudaFree(0) (making the primary context current)");
        JCudaDriver.setExceptionsEnabled(false);
        return new CudaModule(ptx);
    }

    /**
     * Enqueues {@code kernel<<<gridX, blockX, 0, stream>>>(args...)} ({@code cuLaunchKernel}).
     *
     * @param kernel the {@code .entry} name in the PTX
     * @param gridX blocks, &ge; 1
     * @param blockX threads per block, 1..1024
     * @param stream the stream to enqueue on
     * @param args kernel arguments, each a 64-bit value
     * @throws CudaException if the kernel does not exist or the launch fails
     */
    public void launch(String kernel, int gridX, int blockX, CudaStream stream, long... args) {
        Launcher l = launcher(kernel, args.length);
        for (int i = 0; i < args.length; i++) {
            l.arg(i, args[i]);
        }
        l.launch(gridX, blockX, stream);
    }

    /**
     * A launcher of {@code kernel} whose parameter memory is made once, so that a launch allocates nothing on the
     * Java heap (the loader launches per batch: {@link #launch} allocates a few hundred bytes each time).
     *
     * @param kernel the {@code .entry} name in the PTX
     * @param args how many 64-bit arguments it takes, &ge; 0
     * @return the launcher; not thread-safe (one thread at a time), valid while this module is open
     * @throws CudaException if the kernel does not exist
     * @throws IllegalArgumentException if {@code args} is negative
     */
    public Launcher launcher(String kernel, int args) {
        checkOpen();
        if (args < 0) {
            throw new IllegalArgumentException("a kernel takes >= 0 arguments, got " + args);
        }
        return new Launcher(kernel, functions.computeIfAbsent(kernel, this::function), args);
    }

    /**
     * Launches of one kernel with parameter memory made once: set each argument ({@link #arg}), then {@link #launch}.
     * Not thread-safe.
     */
    public final class Launcher {
        private final String kernel;
        private final CUfunction function;
        private final long[][] values;
        private final Pointer params;
        private CudaStream lastStream;
        private CUstream lastDriverStream;

        private Launcher(String kernel, CUfunction function, int args) {
            this.kernel = kernel;
            this.function = function;
            this.values = new long[args][1];
            Pointer[] p = new Pointer[args];
            for (int i = 0; i < args; i++) {
                p[i] = Pointer.to(values[i]);
            }
            this.params = Pointer.to(p);
        }

        /**
         * Sets argument {@code i} of the next launch.
         *
         * @param i the argument's index, 0-based
         * @param value its 64-bit value (a device pointer or an integer)
         * @return this launcher
         * @throws ArrayIndexOutOfBoundsException if the kernel has no argument {@code i}
         */
        public Launcher arg(int i, long value) {
            values[i][0] = value;
            return this;
        }

        /**
         * Enqueues {@code kernel<<<gridX, blockX, 0, stream>>>} with the arguments set ({@code cuLaunchKernel}).
         *
         * @param gridX blocks, &ge; 1
         * @param blockX threads per block, 1..1024
         * @param stream the stream to enqueue on
         * @throws CudaException if the launch fails
         * @throws IllegalStateException if the module was closed
         */
        public void launch(int gridX, int blockX, CudaStream stream) {
            checkOpen();
            if (stream != lastStream) {
                lastDriverStream = new CUstream(stream.stream);
                lastStream = stream;
            }
            int rc = JCudaDriver.cuLaunchKernel(function, gridX, 1, 1, blockX, 1, 1, 0, lastDriverStream, params, null);
            if (rc != CUresult.CUDA_SUCCESS) {
                throw new CudaException("cuLaunchKernel(" + kernel + ")", rc, CUresult.stringFor(rc));
            }
        }
    }

    private CUfunction function(String kernel) {
        CUfunction f = new CUfunction();
        int rc = JCudaDriver.cuModuleGetFunction(f, module, kernel);
        if (rc != CUresult.CUDA_SUCCESS) {
            throw new CudaException("cuModuleGetFunction(" + kernel + ")", rc, CUresult.stringFor(rc));
        }
        return f;
    }

    @Override
    protected void free() {
        JCudaDriver.cuModuleUnload(module);
    }

    @Override
    protected String describe() {
        return "CUDA module";
    }
}
