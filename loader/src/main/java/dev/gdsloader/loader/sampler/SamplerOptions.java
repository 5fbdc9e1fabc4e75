package dev.gdsloader.loader.sampler;

import java.util.Map;

/**
 * Sampler settings. The order of every epoch is a pure function of (seed, epoch, rank, world size) and
 * the dataset's record and shard counts. Immutable and thread-safe: start from {@link #sequential()} and
 * change fields with the {@code with...} methods, each of which validates the copy it returns.
 *
 * <p>As JSON (the {@code "sampler"} object of {@link dev.gdsloader.loader.LoaderOptions} and of
 * {@link dev.gdsloader.loader.LoaderState}) the fields keep these names.
 *
 * @param shuffle how records are ordered
 * @param seed seed of the shuffles (ignored by {@link Shuffle#NONE})
 * @param blockRecords block size in records for {@link Shuffle#SHARD_BLOCKS}, &ge; 1, or 0 for "the batch
 *     size" (a {@link Sampler} resolves 0 with its batch size)
 * @param rank this process's rank, {@code 0 <= rank < worldSize}
 * @param worldSize number of ranks, &ge; 1
 * @param partition how records are split across ranks
 * @param dropLast give every rank {@code floor(N / worldSize)} records and drop a short last batch
 */
public record SamplerOptions(Shuffle shuffle, long seed, int blockRecords, int rank, int worldSize, Partition partition,
                             boolean dropLast) {
    /**
     * @throws IllegalArgumentException naming the first invalid field
     * @throws NullPointerException naming {@code shuffle} or {@code partition} if null
     */
    public SamplerOptions {
        java.util.Objects.requireNonNull(shuffle, "sampler option 'shuffle' is null");
        java.util.Objects.requireNonNull(partition, "sampler option 'partition' is null");
        if (worldSize < 1) {
            throw new IllegalArgumentException("worldSize must be >= 1, got " + worldSize);
        }
        if (rank < 0 || rank >= worldSize) {
            throw new IllegalArgumentException("rank must be in [0, " + worldSize + ") (worldSize " + worldSize + "), got " + rank);
        }
        if (blockRecords < 0) {
            throw new IllegalArgumentException("blockRecords must be >= 1 (or 0 for the batch size), got " + blockRecords);
        }
    }

    /**
     * @return sequential order ({@link Shuffle#NONE}, seed 0), block size = the batch size, rank 0 of 1,
     *     {@link Partition#EXACT_ONCE}, keep the last batch
     */
    public static SamplerOptions sequential() {
        return new SamplerOptions(Shuffle.NONE, 0, 0, 0, 1, Partition.EXACT_ONCE, false);
    }

    /**
     * @param shuffle how records are ordered each epoch
     * @param seed seed of the shuffle
     * @return a copy with this shuffle and seed
     */
    public SamplerOptions withShuffle(Shuffle shuffle, long seed) {
        return new SamplerOptions(shuffle, seed, blockRecords, rank, worldSize, partition, dropLast);
    }

    /**
     * @param records block size of {@link Shuffle#SHARD_BLOCKS}, &ge; 1, or 0 for the batch size
     * @return a copy with this block size
     * @throws IllegalArgumentException if {@code records < 0}
     */
    public SamplerOptions withBlockRecords(int records) {
        return new SamplerOptions(shuffle, seed, records, rank, worldSize, partition, dropLast);
    }

    /**
     * @param rank this process's rank, {@code 0 <= rank < worldSize}
     * @param worldSize number of ranks, &ge; 1
     * @param partition how records split when N does not divide by the world size
     * @return a copy with these ranks
     * @throws IllegalArgumentException naming {@code rank} or {@code worldSize} if out of range
     */
    public SamplerOptions withRanks(int rank, int worldSize, Partition partition) {
        return new SamplerOptions(shuffle, seed, blockRecords, rank, worldSize, partition, dropLast);
    }

    /**
     * @param drop give every rank {@code floor(N / worldSize)} records and drop a short last batch
     * @return a copy with this drop-last setting
     */
    public SamplerOptions withDropLast(boolean drop) {
        return new SamplerOptions(shuffle, seed, blockRecords, rank, worldSize, partition, drop);
    }

    /**
     * Reads rank and world size from the usual launcher environment ({@code RANK}, {@code WORLD_SIZE}, as set
     * by torchrun and MPI wrappers); absent variables mean rank 0 of 1.
     *
     * @param env the environment, e.g. {@code System.getenv()}
     * @return these options with rank and world size from {@code env}
     * @throws IllegalArgumentException if a variable is not a number or the pair is inconsistent
     */
    public SamplerOptions withRankFrom(Map<String, String> env) {
        return withRanks(parse(env, "RANK", 0), parse(env, "WORLD_SIZE", 1), partition);
    }

    private static int parse(Map<String, String> env, String name, int dflt) {
        String v = env.get(name);
        if (v == null || v.isBlank()) {
            return dflt;
        }
        try {
            return Integer.parseInt(v.trim());
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException("environment variable " + name + "='" + v + "' is not an integer");
        }
    }
}
