package dev.gdsloader.loader.path;

/**
 * Which way the loader moves bytes from storage to the consumer, as requested (and the path an engine provider serves).
 */
public enum ReadPath {
    /**
     * MAPPED where there is a GPU that supports read-only host registration and the shard files fit the loader's
     * host budget (and none is decoded on the host); else GDS where cuFile does true GPUDirect DMA for the shards;
     * else BOUNCE where there is a GPU (also where cuFile runs only in compat mode, which the bounce path outruns);
     * else HOST. The reason, logged once, says which rule decided.
     */
    AUTO,
    /**
     * Zero copy from the page cache: shard files mapped read-only and registered for the GPU, batches moved by the
     * GPU's copy engine (large runs) and a gather kernel (records), with no CPU copy. Refused (naming both sizes)
     * where the mappable files do not fit the host budget. Host-decoded shards (compressed Arrow bodies, deflated
     * {@code .npz} members) of a dataset are decoded into pinned staging and copied instead
     * ({@code Batch.stagedBytes()}).
     */
    MAPPED,
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
