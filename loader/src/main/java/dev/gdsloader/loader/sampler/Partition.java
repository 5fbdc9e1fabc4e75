package dev.gdsloader.loader.sampler;

/**
 * How an epoch's records are split across ranks when the record count does not divide by the world size.
 */
public enum Partition {
    /**
     * Every record exactly once per epoch across all ranks; ranks get contiguous parts of the epoch's order
     * whose sizes differ by at most one record (so at most one batch).
     */
    EXACT_ONCE,
    /**
     * Every rank gets {@code ceil(N / worldSize)} records: the order is repeated from its start to fill
     * up, as PyTorch's {@code DistributedSampler} does, and every repeated record is flagged as padding in its
     * batch so evaluation can drop it.
     */
    PAD
}
