package dev.gdsloader.loader.io;

import java.util.Locale;

/**
 * Whether the staged paths (bounce, host) read shards with {@code O_DIRECT} or through the page cache, when
 * the user did not say. {@code O_DIRECT} is right for a dataset that streams from storage: it would not stay
 * cached anyway, and bypassing the cache keeps it from evicting the training process's memory. Buffered reads
 * are right for a dataset that fits in memory: from the second epoch on the page cache serves every read,
 * where {@code O_DIRECT} would send each (often small, scattered) record back to the disk every epoch: on the
 * H200 machine the Fashion-MNIST training sample (784-byte records, global shuffle, bounce path) ran at
 * 27k samples/s with {@code O_DIRECT} and 104k buffered. The line between the two
 * is half of the host's physical memory. Stateless and thread-safe.
 */
public final class DirectIoPolicy {
    private DirectIoPolicy() {
    }

    /**
     * The choice and the one line saying why.
     *
     * @param direct read with {@code O_DIRECT}
     * @param reason why, naming the sizes compared
     */
    public record Choice(boolean direct, String reason) {
    }

    /**
     * @param requested the user's choice, or {@code null} for none
     * @param datasetBytes bytes of the records the loader reads (all selected columns)
     * @param hostMemoryBytes physical memory of the host, bytes
     * @return {@code requested} where given; else {@code O_DIRECT} only if the dataset is larger than half of
     *     the host's memory
     * @throws IllegalArgumentException if a size is negative
     */
    public static Choice choose(Boolean requested, long datasetBytes, long hostMemoryBytes) {
        if (datasetBytes < 0 || hostMemoryBytes < 0) {
            throw new IllegalArgumentException("sizes must be >= 0: dataset " + datasetBytes + ", memory " + hostMemoryBytes);
        }
        if (requested != null) {
            return new Choice(requested, requested ? "O_DIRECT reads as requested" : "buffered reads as requested");
        }
        String sizes = String.format(Locale.ROOT, "the dataset (%.2f GB) %s half of host memory (%.2f GB)",
                datasetBytes / 1e9, datasetBytes > hostMemoryBytes / 2 ? "exceeds" : "fits in", hostMemoryBytes / 2e9);
        return datasetBytes > hostMemoryBytes / 2
                ? new Choice(true, "O_DIRECT reads: " + sizes + ", so it streams from storage without evicting memory")
                : new Choice(false, "buffered reads: " + sizes + ", so the page cache serves it after the first epoch");
    }

    /**
     * @return the host's physical memory, bytes: {@link dev.gdsloader.memory.NativeAllocator#hostMemoryBytes()}, the
     *     one reading of it, whose half is also the root allocator's host budget
     */
    public static long hostMemoryBytes() {
        return dev.gdsloader.memory.NativeAllocator.hostMemoryBytes();
    }
}
