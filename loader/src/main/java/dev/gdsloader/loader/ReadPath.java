package dev.gdsloader.loader;

/**
 * Which way the loader moves bytes from storage to the consumer, as requested.
 */
public enum ReadPath {
    /**
     * GDS where cuFile does true GPUDirect DMA for the shards, else BOUNCE where there is a GPU (also where cuFile
     * runs only in compat mode, which the bounce path outruns), else HOST; the reason is logged once.
     */
    AUTO,
    /** {@code cuFileRead} straight into device memory (true GPUDirect, or cuFile's compat mode where the probe says so). */
    GDS,
    /**
     * Reads into pinned host memory ({@code O_DIRECT} covers, or each piece's exact bytes through the page cache when
     * the dataset fits in half of host memory), then {@code cudaMemcpyAsync} on the slot's stream.
     */
    BOUNCE,
    /** The same reads into host memory only; for machines without a GPU. */
    HOST
}
