package dev.gdsloader.loader.path;

/**
 * The way a batch's bytes really travelled, as reported on every {@link dev.gdsloader.loader.Batch} (and by the engine that moved it).
 */
public enum PathTaken {
    /** cuFile with nvidia-fs: DMA from storage into GPU memory. */
    GDS,
    /** cuFile in compatibility mode: libcufile's own POSIX reads and bounce buffers. */
    CUFILE_COMPAT,
    /** this loader's bounce path: {@code O_DIRECT} (or buffered) reads into pinned memory, then async copies. */
    BOUNCE,
    /** registered mappings of the shard files read by the GPU (copy engine and gather kernel); no CPU copy. */
    MAPPED,
    /** host memory only; no GPU involved. */
    HOST;

    /** @return true when the batch lives in device memory */
    public boolean onDevice() {
        return this != HOST;
    }
}
