package dev.gdsloader.loader.io;

/**
 * The settings every engine is opened with.
 *
 * @param maxIo largest single read, bytes (a positive multiple of 4 KiB)
 * @param direct whether the staged reads open shards with {@code O_DIRECT} (falls back per file where refused)
 * @param gdsThresholdBytes on the GDS path, pieces smaller than this many bytes go through pinned staging and a
 *     copy instead of {@code cuFileRead}; 0 sends every piece through cuFile
 */
public record EngineConfig(long maxIo, boolean direct, long gdsThresholdBytes) {
    /**
     * @throws IllegalArgumentException if a size is out of range
     */
    public EngineConfig {
        if (maxIo <= 0 || (maxIo & 4095) != 0) {
            throw new IllegalArgumentException("maxIo must be a positive multiple of 4096 bytes, got " + maxIo);
        }
        if (gdsThresholdBytes < 0) {
            throw new IllegalArgumentException("gdsThresholdBytes must be >= 0, got " + gdsThresholdBytes);
        }
    }
}
