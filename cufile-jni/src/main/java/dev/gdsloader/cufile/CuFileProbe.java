package dev.gdsloader.cufile;

import dev.gdsloader.cuda.Cuda;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Optional;

/**
 * Decides whether cuFile can be used, and how, without ever killing the JVM: it checks for a GPU, for
 * libcufile and the symbols the loader calls (through {@link CuFileLibrary}, before touching the bytedeco
 * binding), opens the driver, and, given a directory, registers a small file there — the step that fails
 * on machines whose disks udev does not describe.
 *
 * <p>Mode: {@link CuFileMode#GDS} when the nvidia-fs kernel module is loaded (driver properties report
 * an nvidia-fs version or {@code /proc/driver/nvidia-fs} exists), {@link CuFileMode#COMPAT} when cuFile
 * works without it, {@link CuFileMode#UNAVAILABLE} otherwise. Stateless and thread-safe.
 */
public final class CuFileProbe {
    private CuFileProbe() {
    }

    /**
     * Probes cuFile for files in {@code dataDir}.
     *
     * @param dataDir directory whose filesystem the loader will read; empty to probe the driver only
     * @return the mode and its reason; never throws
     */
    public static CuFileStatus probe(Optional<Path> dataDir) {
        if (!Cuda.availability().available()) {
            return unavailable("no GPU: " + Cuda.availability().reason(), null);
        }
        CuFileLibrary lib = CuFileLibrary.get();
        if (!lib.isPresent()) {
            return unavailable(lib.failure().orElseThrow(), null);
        }
        CuFileDriver driver;
        try {
            driver = CuFileDriver.get();
        } catch (CuFileException e) {
            return unavailable("driver open failed: " + e.getMessage(), null);
        }
        Optional<String> version = driver.version() == 0 ? Optional.empty() : Optional.of(driver.versionString());
        Optional<CuFileDriverProperties> props = Optional.of(driver.properties());
        if (dataDir.isPresent()) {
            Optional<String> failure = tryRegister(dataDir.get());
            if (failure.isPresent()) {
                return new CuFileStatus(CuFileMode.UNAVAILABLE, "handle registration failed: " + failure.get(), version, props);
            }
        }
        boolean nvfs = driver.properties().nvfsLoaded() || Files.exists(Path.of("/proc/driver/nvidia-fs"));
        if (nvfs) {
            return new CuFileStatus(CuFileMode.GDS, "nvidia-fs " + driver.properties().nvfsMajor() + "."
                    + driver.properties().nvfsMinor() + " is loaded: reads DMA from storage into GPU memory", version, props);
        }
        return new CuFileStatus(CuFileMode.COMPAT, "no nvidia-fs kernel module: cuFile runs in compatibility mode "
                + "(its own POSIX reads through pinned bounce buffers)", version, props);
    }

    private static Optional<String> tryRegister(Path dir) {
        Path probe = null;
        try {
            probe = Files.createTempFile(dir, ".gdsloader-probe-", ".bin");
            Files.write(probe, new byte[4096]);
            CuFileHandle.register(probe).close();
            return Optional.empty();
        } catch (IOException e) {
            return Optional.of(e.getMessage());
        } finally {
            if (probe != null) {
                try {
                    Files.deleteIfExists(probe);
                } catch (IOException ignored) {
                    // a leftover 4 KiB probe file is harmless
                }
            }
        }
    }

    private static CuFileStatus unavailable(String reason, String version) {
        return new CuFileStatus(CuFileMode.UNAVAILABLE, reason, Optional.ofNullable(version), Optional.empty());
    }
}
