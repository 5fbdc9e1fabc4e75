package dev.gdsloader.loader;

import dev.gdsloader.loader.path.PathTaken;
import dev.gdsloader.memory.MemoryUsage;

/**
 * Counters of one epoch (or of the epoch in progress), for benchmarks and metrics.
 *
 * @param path the path the batches took
 * @param batches batches handed to the consumer
 * @param bytes useful bytes delivered (records only)
 * @param storageBytes bytes read from storage, including 4 KiB alignment overhead
 * @param wallNanos from the start of the epoch to the last batch handed over
 * @param stallNanos time the consumer spent waiting inside {@code next()} for a batch
 * @param ioNanos time the I/O threads spent reading (summed over threads; above {@code wallNanos} when reads overlap)
 * @param slotsInFlight slots holding a batch that is being read or is with the consumer, now
 * @param memory native memory the loader's allocator holds now: device, pinned, host and registered bytes (the
 *     MAPPED path's registered shard files: {@code memory().bytes(MemoryKind.HOST_REGISTERED)})
 * @param registrationNanos wall time the loader's build spent mapping and registering shard files (MAPPED; 0 on
 *     other paths, and for files another loader of the process had registered already)
 * @param deviceNanos GPU time the transfers of {@code deviceBatches} batches took, summed, from timed CUDA events
 *     around each batch's work on its stream (MAPPED: entry upload, copies and gathers; 0 on paths that do not time
 *     it). A batch is counted once the loader has seen it complete (when its slot is refilled or the epoch stops), so
 *     the last prefetch-depth batches of an epoch may count in the next. {@code deviceNanos / deviceBatches} against
 *     {@code wallNanos / batches} shows whether the GPU's transfers or the host's feeding limit the loader
 * @param deviceBatches batches {@code deviceNanos} covers
 */
public record LoaderStats(PathTaken path, long batches, long bytes, long storageBytes, long wallNanos, long stallNanos,
                          long ioNanos, int slotsInFlight, MemoryUsage memory, long registrationNanos, long deviceNanos,
                          long deviceBatches) {
    /**
     * Counters without GPU transfer time; the parameters as in the record's.
     *
     * @param path the path the batches took
     * @param batches batches handed to the consumer
     * @param bytes useful bytes delivered
     * @param storageBytes bytes read from storage
     * @param wallNanos from the start of the epoch to the last batch handed over
     * @param stallNanos time the consumer waited inside {@code next()}
     * @param ioNanos time the I/O threads spent reading, summed over threads
     * @param slotsInFlight slots holding a batch now
     * @param memory native memory the loader's allocator holds now
     * @param registrationNanos wall time the loader's build spent registering shard files
     */
    public LoaderStats(PathTaken path, long batches, long bytes, long storageBytes, long wallNanos, long stallNanos,
                       long ioNanos, int slotsInFlight, MemoryUsage memory, long registrationNanos) {
        this(path, batches, bytes, storageBytes, wallNanos, stallNanos, ioNanos, slotsInFlight, memory, registrationNanos, 0, 0);
    }

    /**
     * Counters with a memory snapshot and no registration time; the parameters as in the record's.
     *
     * @param path the path the batches took
     * @param batches batches handed to the consumer
     * @param bytes useful bytes delivered
     * @param storageBytes bytes read from storage
     * @param wallNanos from the start of the epoch to the last batch handed over
     * @param stallNanos time the consumer waited inside {@code next()}
     * @param ioNanos time the I/O threads spent reading, summed over threads
     * @param slotsInFlight slots holding a batch now
     * @param memory native memory the loader's allocator holds now
     */
    public LoaderStats(PathTaken path, long batches, long bytes, long storageBytes, long wallNanos, long stallNanos,
                       long ioNanos, int slotsInFlight, MemoryUsage memory) {
        this(path, batches, bytes, storageBytes, wallNanos, stallNanos, ioNanos, slotsInFlight, memory, 0);
    }

    /**
     * Counters without a memory snapshot ({@link MemoryUsage#NONE}) or registration time.
     *
     * @param path the path the batches took
     * @param batches batches handed to the consumer
     * @param bytes useful bytes delivered
     * @param storageBytes bytes read from storage
     * @param wallNanos from the start of the epoch to the last batch handed over
     * @param stallNanos time the consumer waited inside {@code next()}
     * @param ioNanos time the I/O threads spent reading, summed over threads
     * @param slotsInFlight slots holding a batch now
     */
    public LoaderStats(PathTaken path, long batches, long bytes, long storageBytes, long wallNanos, long stallNanos,
                       long ioNanos, int slotsInFlight) {
        this(path, batches, bytes, storageBytes, wallNanos, stallNanos, ioNanos, slotsInFlight, MemoryUsage.NONE);
    }

    /**
     * @param usage a memory snapshot
     * @return these counters with it
     */
    public LoaderStats withMemory(MemoryUsage usage) {
        return new LoaderStats(path, batches, bytes, storageBytes, wallNanos, stallNanos, ioNanos, slotsInFlight, usage,
                registrationNanos, deviceNanos, deviceBatches);
    }

    /**
     * @param nanos the loader's registration time
     * @return these counters with it
     */
    public LoaderStats withRegistrationNanos(long nanos) {
        return new LoaderStats(path, batches, bytes, storageBytes, wallNanos, stallNanos, ioNanos, slotsInFlight, memory,
                nanos, deviceNanos, deviceBatches);
    }

    /**
     * @param nanos a wall time to count instead (a benchmark adding the time its last batches took to land)
     * @return these counters with it
     */
    public LoaderStats withWallNanos(long nanos) {
        return new LoaderStats(path, batches, bytes, storageBytes, nanos, stallNanos, ioNanos, slotsInFlight, memory,
                registrationNanos, deviceNanos, deviceBatches);
    }

    /** @return delivered throughput in GB/s (1e9 bytes per second), 0 before the first batch */
    public double gigabytesPerSecond() {
        return wallNanos == 0 ? 0 : bytes / (double) wallNanos;
    }

    /** @return mean GPU transfer time per counted batch in milliseconds; NaN where none was counted */
    public double deviceMillisPerBatch() {
        return deviceBatches == 0 ? Double.NaN : deviceNanos / 1e6 / deviceBatches;
    }

    /** @return consumer stall time in milliseconds */
    public double stallMillis() {
        return stallNanos / 1e6;
    }
}
