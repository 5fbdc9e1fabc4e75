package dev.gdsloader.loader.sampler;

import java.util.Map;

/**
 * Sampler settings. The order of every epoch is a pure function of (seed, epoch, rank, world size) and
 * the dataset's record and shard counts.
 *
 * @param shuffle how records are ordered
 * @param seed seed of the shuffles (ignored by {@link Shuffle#NONE})
 * @param blockRecords block size in records for {@link Shuffle#SHARD_BLOCKS}, &ge; 1
 * @param rank this process's rank, {@code 0 <= rank < worldSize}
 * @param worldSize number of ranks, &ge; 1
 * @param partition how records are split across ranks
 * @param dropLast give every rank {@code floor(N / worldSize)} records and drop a short last batch
 */
public record SamplerOptions(Shuffle shuffle, long seed, int blockRecords, int rank, int worldSize, Partition partition,
                             boolean dropLast) {
    /**
     * @throws IllegalArgumentException naming the first invalid field
     */
    public SamplerOptions {
        if (worldSize < 1) {
            throw new IllegalArgumentException("world size must be >= 1, got " + worldSize);
        }
        if (rank < 0 || rank >= worldSize) {
            throw new IllegalArgumentException("rank must be in [0, " + worldSize + "), got " + rank);
        }
        if (blockRecords < 1) {
            throw new IllegalArgumentException("blockRecords must be >= 1, got " + blockRecords);
        }
    }

    /** @return sequential order, one rank, exact-once, keep the last batch */
    public static SamplerOptions sequential() {
        return new SamplerOptions(Shuffle.NONE, 0, 1, 0, 1, Partition.EXACT_ONCE, false);
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
        int r = parse(env, "RANK", 0);
        int w = parse(env, "WORLD_SIZE", 1);
        return new SamplerOptions(shuffle, seed, blockRecords, r, w, partition, dropLast);
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
