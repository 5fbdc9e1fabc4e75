package dev.gdsloader.cufile;

import java.util.Optional;

/**
 * What {@link CuFileProbe} found.
 *
 * @param mode GDS, COMPAT or UNAVAILABLE
 * @param reason one line in plain words: why this mode (e.g. "no nvidia-fs kernel module: cuFile runs in
 *     compatibility mode (its own POSIX bounce)" or "handle registration failed: udev has no record ...")
 * @param libraryVersion libcufile version, e.g. "1.15.1", or empty when not known
 * @param properties the driver's properties, empty when the driver could not be opened
 */
public record CuFileStatus(CuFileMode mode, String reason, Optional<String> libraryVersion,
                           Optional<CuFileDriverProperties> properties) {

    /** @return true unless {@link #mode()} is UNAVAILABLE */
    public boolean usable() {
        return mode != CuFileMode.UNAVAILABLE;
    }
}
