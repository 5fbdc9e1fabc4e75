package dev.gdsloader.cuda;

/**
 * A CUDA runtime call failed, or CUDA cannot be used on this machine at all.
 *
 * <p>The message names the call, the CUDA error name (for example {@code cudaErrorMemoryAllocation})
 * and the error code, as defined by the CUDA runtime's {@code cudaError_t} enumeration. When CUDA is
 * unavailable (no driver, no GPU, native library not loadable) the code is {@link #UNAVAILABLE} and
 * the message says why in one line.
 *
 * <p>Unchecked, like cudf-java's {@code CudaException}: every CUDA entry point may throw it.
 */
public class CudaException extends RuntimeException {
    /** Code used when CUDA itself could not be reached (no driver, no device, no native library). */
    public static final int UNAVAILABLE = -1;

    private static final long serialVersionUID = 1L;
    private final int code;
    private final String errorName;

    /**
     * @param call the CUDA call that failed, e.g. {@code cudaMalloc(268435456 bytes)}
     * @param code the {@code cudaError_t} value, or {@link #UNAVAILABLE}
     * @param errorName the symbolic name of {@code code}
     */
    public CudaException(String call, int code, String errorName) {
        super(call + " failed: " + errorName + " (" + code + ")");
        this.code = code;
        this.errorName = errorName;
    }

    /**
     * Creates the exception for "CUDA cannot be used here".
     *
     * @param reason one line saying why, e.g. "no CUDA driver (libcuda.so.1 not found)"
     * @param cause the underlying failure, may be {@code null}
     */
    public CudaException(String reason, Throwable cause) {
        super("CUDA is not available: " + reason, cause);
        this.code = UNAVAILABLE;
        this.errorName = "unavailable";
    }

    /** @return the {@code cudaError_t} value, or {@link #UNAVAILABLE} */
    public int code() {
        return code;
    }

    /** @return the symbolic CUDA error name, e.g. {@code cudaErrorInvalidValue} */
    public String errorName() {
        return errorName;
    }
}
