package dev.gdsloader.cufile;

/**
 * How cuFile can move data on this machine, as decided by {@link CuFileProbe}.
 */
public enum CuFileMode {
    /** True GPUDirect Storage: DMA from storage into GPU memory through the nvidia-fs kernel module. */
    GDS,
    /**
     * cuFile works, but in compatibility mode: libcufile reads into its own pinned bounce buffers with
     * POSIX I/O and copies to the GPU (no nvidia-fs module, or a filesystem GDS does not support).
     */
    COMPAT,
    /** cuFile cannot be used (no GPU, no libcufile, driver open or handle registration failed). */
    UNAVAILABLE
}
