package dev.gdsloader.loader;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.gdsloader.loader.sampler.Partition;
import dev.gdsloader.loader.sampler.Shuffle;

/**
 * Where a consumer is in the data: the epoch and how many of its batches the consumer has received, plus
 * the sampler settings that define the order, so a loader built from it continues with the next record
 * (the order is a pure function of these). Serialised as a small JSON object (Jackson).
 *
 * @param version format version of this state, 1
 * @param epoch the epoch in progress, from 0
 * @param batchesConsumed batches of that epoch the consumer has received
 * @param records records in the dataset (a different dataset cannot resume from this state)
 * @param batchSize records per batch
 * @param shuffle the sampler's shuffle
 * @param seed the sampler's seed
 * @param blockRecords the sampler's block size
 * @param rank this rank
 * @param worldSize number of ranks
 * @param partition how records were split across ranks
 * @param dropLast whether short batches were dropped
 */
public record LoaderState(int version, long epoch, long batchesConsumed, long records, int batchSize, Shuffle shuffle,
                          long seed, int blockRecords, int rank, int worldSize, Partition partition, boolean dropLast) {
    private static final ObjectMapper JSON = new ObjectMapper();

    /** @return this state as one line of JSON */
    public String toJson() {
        try {
            return JSON.writeValueAsString(this);
        } catch (JsonProcessingException e) {
            throw new IllegalStateException("cannot serialise loader state: " + e.getMessage(), e);
        }
    }

    /**
     * @param json what {@link #toJson()} wrote
     * @return the state
     * @throws IllegalArgumentException if the text is not a loader state (with the parser's reason)
     */
    public static LoaderState fromJson(String json) {
        try {
            LoaderState s = JSON.readValue(json, LoaderState.class);
            if (s.version() != 1) {
                throw new IllegalArgumentException("loader state version " + s.version() + " is not supported (expected 1)");
            }
            return s;
        } catch (JsonProcessingException e) {
            throw new IllegalArgumentException("not a loader state: " + e.getOriginalMessage(), e);
        }
    }
}
