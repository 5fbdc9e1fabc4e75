package dev.gdsloader.loader.sampler;

import java.util.Arrays;
import java.util.SplittableRandom;

/**
 * Computes each epoch's record order for one rank: a deterministic function of (seed, epoch, rank, world
 * size) and the dataset's shard sizes, so every rank computes the same global order without talking to
 * the others, and a restarted job computes the same order again.
 *
 * <p>The global order of an epoch is shuffled as {@link SamplerOptions#shuffle()} says (SplittableRandom
 * seeded from seed and epoch, Fisher-Yates); rank {@code r} then takes the {@code r}-th contiguous part of it
 * (contiguous, so the sequential order gives each rank one contiguous range of the files). Immutable and
 * thread-safe.
 */
public final class Sampler {
    private final SamplerOptions options;
    private final long[] shardRecords;
    private final long total;

    /**
     * @param options sampler settings
     * @param shardRecords records per shard, in dataset order
     * @param batchSize records per batch, used to check that every rank gets at least one batch
     * @throws IllegalArgumentException if, with more than one rank, some rank would get no batch (a rank
     *     with nothing to do would leave the others waiting in their collectives); the message names the
     *     rank and the counts. A single rank may get an empty epoch (an empty dataset, or drop_last with a
     *     batch larger than the dataset).
     */
    public Sampler(SamplerOptions options, long[] shardRecords, int batchSize) {
        this.options = options;
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

    /** @return the options */
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
     * @return this rank's order for that epoch
     */
    public EpochOrder order(long epoch) {
        long[] global = globalOrder(epoch);
        int rank = options.rank();
        int n = (int) recordsOf(rank);
        long start = startOf(rank);
        long[] mine = new long[n];
        int firstPadded = n;
        for (int i = 0; i < n; i++) {
            long pos = start + i;
            if (pos >= total && firstPadded == n) {
                firstPadded = i;
            }
            mine[i] = global[(int) (pos % total)];
        }
        return new EpochOrder(epoch, mine, firstPadded);
    }

    private long[] globalOrder(long epoch) {
        long[] order = new long[(int) total];
        SplittableRandom rnd = new SplittableRandom(mix(options.seed(), epoch));
        switch (options.shuffle()) {
            case NONE -> {
                for (int i = 0; i < order.length; i++) {
                    order[i] = i;
                }
            }
            case GLOBAL -> {
                for (int i = 0; i < order.length; i++) {
                    order[i] = i;
                }
                shuffle(order, rnd);
            }
            case SHARD_BLOCKS -> shardBlocks(order, rnd);
            default -> throw new IllegalStateException(options.shuffle().toString());
        }
        return order;
    }

    private void shardBlocks(long[] order, SplittableRandom rnd) {
        long[] shardStart = new long[shardRecords.length];
        for (int s = 1; s < shardRecords.length; s++) {
            shardStart[s] = shardStart[s - 1] + shardRecords[s - 1];
        }
        long[] shards = new long[shardRecords.length];
        for (int s = 0; s < shards.length; s++) {
            shards[s] = s;
        }
        shuffle(shards, rnd);
        int b = options.blockRecords();
        int k = 0;
        for (long sl : shards) {
            int s = (int) sl;
            long blocks = (shardRecords[s] + b - 1) / b;
            long[] blockOrder = new long[(int) blocks];
            for (int i = 0; i < blockOrder.length; i++) {
                blockOrder[i] = i;
            }
            shuffle(blockOrder, rnd);
            for (long blk : blockOrder) {
                long from = shardStart[s] + blk * b;
                long to = Math.min(shardStart[s] + shardRecords[s], from + b);
                for (long r = from; r < to; r++) {
                    order[k++] = r;
                }
            }
        }
    }

    private static void shuffle(long[] a, SplittableRandom rnd) {
        for (int i = a.length - 1; i > 0; i--) {
            int j = rnd.nextInt(i + 1);
            long t = a[i];
            a[i] = a[j];
            a[j] = t;
        }
    }

    /** SplitMix64's finaliser over (seed, epoch), so neighbouring epochs get unrelated streams. */
    private static long mix(long seed, long epoch) {
        long z = seed + 0x9E3779B97F4A7C15L * (epoch + 1);
        z = (z ^ (z >>> 30)) * 0xBF58476D1CE4E5B9L;
        z = (z ^ (z >>> 27)) * 0x94D049BB133111EBL;
        return z ^ (z >>> 31);
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
