package dev.gdsloader.loader.sampler;

import java.util.Arrays;

/**
 * Computes each epoch's record order for one rank: a deterministic function of (seed, epoch, rank, world
 * size) and the dataset's shard sizes, so every rank computes the same global order without talking to
 * the others, and a restarted job computes the same order again.
 *
 * <p>The global order of an epoch is shuffled as {@link SamplerOptions#shuffle()} says, with keyed
 * pseudo-random permutations ({@link FeistelPermutation}, key from seed and epoch) evaluated per record, so no
 * array of N records is built; rank {@code r} then takes the {@code r}-th contiguous part of it (contiguous,
 * so the sequential order gives each rank one contiguous range of the files). Immutable and thread-safe.
 */
public final class Sampler {
    private final SamplerOptions options;
    private final long[] shardRecords;
    private final long total;

    /**
     * @param options sampler settings; a block size of 0 becomes {@code batchSize}
     * @param shardRecords records per shard, in dataset order
     * @param batchSize records per batch, used to check that every rank gets at least one batch
     * @throws IllegalArgumentException if, with more than one rank, some rank would get no batch (a rank
     *     with nothing to do would leave the others waiting in their collectives); the message names the
     *     rank and the counts. A single rank may get an empty epoch (an empty dataset, or drop_last with a
     *     batch larger than the dataset).
     */
    public Sampler(SamplerOptions options, long[] shardRecords, int batchSize) {
        this.options = options.blockRecords() == 0 ? options.withBlockRecords(Math.max(1, batchSize)) : options;
        this.shardRecords = shardRecords.clone();
        this.total = Arrays.stream(shardRecords).sum();
        if (total > Integer.MAX_VALUE - 8) {
            throw new IllegalArgumentException(total + " records exceed what one epoch order can hold ("
                    + (Integer.MAX_VALUE - 8) + ")");
        }
        int w = options.worldSize();
        for (int r = 0; r < w && w > 1; r++) {
            long n = recordsOf(r);
            long batches = options.dropLast() ? n / batchSize : (n + batchSize - 1) / batchSize;
            if (batches == 0) {
                throw new IllegalArgumentException("rank " + r + " of " + w + " would get no batch: " + total
                        + " records over " + w + " ranks gives it " + n + " records, batch size " + batchSize
                        + (options.dropLast() ? " with drop_last" : "") + "; use fewer ranks, a smaller batch, or PAD without drop_last");
            }
        }
    }

    /** @return the options, block size resolved (never 0) */
    public SamplerOptions options() {
        return options;
    }

    /** @return records in the dataset */
    public long datasetRecords() {
        return total;
    }

    /**
     * @param rank a rank
     * @return how many entries that rank gets per epoch (padding included)
     */
    public long recordsOf(int rank) {
        long w = options.worldSize();
        if (options.dropLast()) {
            return total / w;
        }
        if (options.partition() == Partition.PAD) {
            return (total + w - 1) / w;
        }
        return total / w + (rank < total % w ? 1 : 0);
    }

    private long startOf(int rank) {
        long w = options.worldSize();
        if (options.dropLast() || options.partition() == Partition.PAD) {
            return rank * recordsOf(0);
        }
        return rank * (total / w) + Math.min(rank, total % w);
    }

    /**
     * @param epoch epoch number, &ge; 0
     * @return this rank's order for that epoch (computed on demand: O(shards) memory, none per record)
     */
    public EpochOrder order(long epoch) {
        int rank = options.rank();
        int n = (int) recordsOf(rank);
        long start = startOf(rank);
        int firstPadded = (int) Math.min(n, Math.max(0, total - start));
        return new EpochOrder(epoch, n, firstPadded, start, Math.max(1, total), globalOrder(epoch));
    }

    private java.util.function.LongUnaryOperator globalOrder(long epoch) {
        long key = FeistelPermutation.mix(options.seed() + 0x9E3779B97F4A7C15L * (epoch + 1));
        return switch (options.shuffle()) {
            case NONE -> p -> p;
            case GLOBAL -> p -> FeistelPermutation.apply(total, key, p);
            case SHARD_BLOCKS -> shardBlocks(key);
        };
    }

    /**
     * Shard order shuffled; within each shard its full blocks of {@code blockRecords} shuffled (a shard's
     * partial last block stays last); records inside a block in order.
     */
    private java.util.function.LongUnaryOperator shardBlocks(long key) {
        int shards = shardRecords.length;
        long[] shardStart = new long[shards];
        for (int s = 1; s < shards; s++) {
            shardStart[s] = shardStart[s - 1] + shardRecords[s - 1];
        }
        int[] shardOrder = new int[shards];
        long[] orderedEnd = new long[shards]; // end position of the k-th shard in the epoch's order
        long pos = 0;
        for (int k = 0; k < shards; k++) {
            shardOrder[k] = (int) FeistelPermutation.apply(shards, key, k);
            pos += shardRecords[shardOrder[k]];
            orderedEnd[k] = pos;
        }
        long b = options.blockRecords();
        return p -> {
            int k = java.util.Arrays.binarySearch(orderedEnd, p);
            k = k >= 0 ? k + 1 : -k - 1; // first shard whose end is past p
            while (shardRecords[shardOrder[k]] == 0) {
                k++;
            }
            int s = shardOrder[k];
            long o = p - (orderedEnd[k] - shardRecords[s]);
            long full = shardRecords[s] / b;
            if (o >= full * b) {
                return shardStart[s] + o;
            }
            long block = FeistelPermutation.apply(full, FeistelPermutation.mix(key ^ (s + 1) * 0xD1B54A32D192ED03L), o / b);
            return shardStart[s] + block * b + o % b;
        };
    }

    /**
     * An upper bound on the pieces (contiguous file ranges) one batch of one column can need, for sizing
     * staging memory: breaks in the order (block boundaries, the padding wrap) plus the column's shard
     * boundaries, never more than one piece per record.
     *
     * @param batchSize records per batch
     * @param shardsInColumn shards of the column
     * @return the bound
     */
    public int maxPiecesPerBatch(int batchSize, int shardsInColumn) {
        long orderBreaks = switch (options.shuffle()) {
            case NONE -> 0;
            case SHARD_BLOCKS -> (batchSize + options.blockRecords() - 1L) / options.blockRecords();
            case GLOBAL -> batchSize;
        };
        return (int) Math.min(batchSize, orderBreaks + shardsInColumn + 2L);
    }
}
