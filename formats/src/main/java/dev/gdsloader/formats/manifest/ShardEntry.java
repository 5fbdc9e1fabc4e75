package dev.gdsloader.formats.manifest;

import java.nio.file.InvalidPathException;
import java.nio.file.Path;
import java.util.Objects;

/**
 * A shard file listed in a {@link DatasetManifest}, e.g.
 * {@code {"file": "images-00000.npy", "column": "images", "records": 10000, "bytes": 7840128,
 * "crc32c": "0x1234abcd"}}.
 *
 * <p>Immutable and thread-safe.
 *
 * @param file the file's path relative to the manifest's directory, with {@code '/'} separators;
 *     not empty, not absolute, without {@code ".."} segments, backslashes or NUL characters
 * @param column the name of the column the shard holds
 * @param records number of records in the shard, {@code >= 0}
 * @param bytes size of the whole file in bytes, {@code >= 0}
 * @param crc32c CRC-32C (Castagnoli, {@link java.util.zip.CRC32C}) of the whole file, in
 *     {@code 0..0xFFFFFFFF}; written as {@code "0x"} and 8 lower-case hex digits
 */
public record ShardEntry(String file, String column, long records, long bytes, long crc32c) {

    /**
     * Validates.
     *
     * @throws NullPointerException if {@code file} or {@code column} is null
     * @throws IllegalArgumentException if {@code file} is not a safe relative path (see
     *     {@link #pathProblem(String)}), or a count or the checksum is out of range
     */
    public ShardEntry {
        Objects.requireNonNull(file, "file");
        Objects.requireNonNull(column, "column");
        String problem = pathProblem(file);
        if (problem != null) {
            throw new IllegalArgumentException("shard file \"" + file + "\": " + problem);
        }
        if (records < 0) {
            throw new IllegalArgumentException("shard " + file + ": records must be >= 0, got "
                    + records);
        }
        if (bytes < 0) {
            throw new IllegalArgumentException("shard " + file + ": bytes must be >= 0, got "
                    + bytes);
        }
        if (crc32c < 0 || crc32c > 0xFFFF_FFFFL) {
            throw new IllegalArgumentException("shard " + file + ": crc32c must be in "
                    + "0..0xffffffff, got " + crc32c);
        }
    }

    /**
     * Returns the checksum as the manifest writes it.
     *
     * @return {@code "0x"} and 8 lower-case hex digits, e.g. {@code "0x1234abcd"}
     */
    public String crc32cHex() {
        return hex(crc32c);
    }

    /**
     * Formats a CRC-32C value as the manifest writes it.
     *
     * @param crc32c the value, {@code 0..0xFFFFFFFF}
     * @return {@code "0x"} and 8 lower-case hex digits
     */
    public static String hex(long crc32c) {
        return String.format("0x%08x", crc32c);
    }

    /**
     * Resolves the shard's file against the manifest's directory.
     *
     * @param dir the directory holding {@code dataset.json}
     * @return {@code dir.resolve(file)}, which lies inside {@code dir} (barring symbolic links)
     */
    public Path resolve(Path dir) {
        return dir.resolve(file);
    }

    /**
     * Tells what is wrong with a shard path, if anything: shard paths must stay inside the
     * manifest's directory on every platform.
     *
     * @param file the path as written in the manifest
     * @return {@code null} if it is acceptable, else the reason, e.g.
     *     {@code "absolute paths are not allowed"}
     */
    public static String pathProblem(String file) {
        if (file.isEmpty()) {
            return "the path is empty";
        }
        if (file.indexOf('\0') >= 0) {
            return "NUL characters are not allowed";
        }
        if (file.indexOf('\\') >= 0) {
            return "backslashes are not allowed (use '/')";
        }
        if (file.startsWith("/") || (file.length() >= 2 && file.charAt(1) == ':'
                && Character.isLetter(file.charAt(0)))) {
            return "absolute paths are not allowed: paths are relative to the manifest's "
                    + "directory";
        }
        for (String segment : file.split("/", -1)) {
            if (segment.equals("..")) {
                return "'..' segments are not allowed: the file must stay inside the manifest's"
                        + " directory";
            }
        }
        try {
            Path p = Path.of(file);
            if (p.isAbsolute()) {
                return "absolute paths are not allowed";
            }
            if (p.normalize().toString().isEmpty()) {
                return "the path names the manifest's directory itself, not a file";
            }
        } catch (InvalidPathException e) {
            return "not a valid path: " + e.getReason();
        }
        return null;
    }
}
