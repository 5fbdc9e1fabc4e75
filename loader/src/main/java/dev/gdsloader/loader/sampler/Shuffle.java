package dev.gdsloader.loader.sampler;

/**
 * How records are ordered within an epoch.
 */
public enum Shuffle {
    /** Records in dataset order, every epoch the same. Longest contiguous reads. */
    NONE,
    /**
     * Shard order shuffled, and within each shard blocks of {@code blockRecords} consecutive records
     * shuffled; records inside a block keep their order, so each batch is a few big contiguous reads.
     */
    SHARD_BLOCKS,
    /** A full random permutation of all records: batches gather records from anywhere (many small reads). */
    GLOBAL
}
