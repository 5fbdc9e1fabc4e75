package dev.gdsloader.loader.spi;

import dev.gdsloader.memory.NativeAllocator;
import dev.gdsloader.posix.ShardOpener;
import java.util.Objects;

/**
 * The settings every engine is opened with.
 *
 * @param maxIo largest single read, bytes (a positive multiple of 4 KiB)
 * @param direct whether the staged reads open shards with {@code O_DIRECT} (falls back per file where refused)
 * @param gdsThresholdBytes on the GDS path, pieces smaller than this many bytes go through pinned staging and a
 *     copy instead of {@code cuFileRead}; 0 sends every piece through cuFile
 * @param hostBudget the allocator whose host budget an engine's long-lived host memory must fit (the MAPPED
 *     path's registered shards are charged to it): the loader's own allocator
 * @param files how shard files are opened: {@link ShardOpener#byPath()}, or beneath a server's root as the files
 *     checked when the dataset was planned (then the MAPPED path, which maps shards by path, is not offered)
 * @param openFiles the most shard files an engine keeps open at once (a bounded cache, least recently used closed
 *     first), &gt; 0; 0 derives it from {@code RLIMIT_NOFILE} (between 16 and 1024)
 */
public record EngineConfig(long maxIo, boolean direct, long gdsThresholdBytes, NativeAllocator hostBudget,
                           ShardOpener files, int openFiles) {
    /**
     * Settings that open shards by path, with the derived open-file bound.
     *
     * @param maxIo largest single read, bytes
     * @param direct whether staged reads use {@code O_DIRECT}
     * @param gdsThresholdBytes the GDS threshold, bytes
     * @param hostBudget the allocator of the engines' long-lived host memory
     */
    public EngineConfig(long maxIo, boolean direct, long gdsThresholdBytes, NativeAllocator hostBudget) {
        this(maxIo, direct, gdsThresholdBytes, hostBudget, ShardOpener.byPath(), 0);
    }

    /**
     * Settings with the process root's allocator as the host budget.
     *
     * @param maxIo largest single read, bytes
     * @param direct whether staged reads use {@code O_DIRECT}
     * @param gdsThresholdBytes the GDS threshold, bytes
     */
    public EngineConfig(long maxIo, boolean direct, long gdsThresholdBytes) {
        this(maxIo, direct, gdsThresholdBytes, NativeAllocator.root());
    }

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
        Objects.requireNonNull(hostBudget, "hostBudget");
        Objects.requireNonNull(files, "files");
        if (openFiles < 0) {
            throw new IllegalArgumentException("openFiles must be >= 0 (0: derived from RLIMIT_NOFILE), got " + openFiles);
        }
    }
}
