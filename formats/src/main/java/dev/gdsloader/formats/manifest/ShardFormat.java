package dev.gdsloader.formats.manifest;

import java.util.Arrays;

/**
 * The shard file formats a {@link DatasetManifest} can list. Immutable and thread-safe.
 */
public enum ShardFormat {
    /** NumPy {@code .npy} files ({@link dev.gdsloader.formats.npy.NpyShard}). */
    NPY("npy"),
    /** safetensors files ({@link dev.gdsloader.formats.safetensors.SafetensorsFile}). */
    SAFETENSORS("safetensors"),
    /** raw record files with JSON sidecars ({@link dev.gdsloader.formats.raw.RawShard}). */
    RAW("raw"),
    /** Arrow IPC files ({@code .arrow}); every record batch is a shard of each fixed-width column. */
    ARROW("arrow");

    private final String jsonName;

    ShardFormat(String jsonName) {
        this.jsonName = jsonName;
    }

    /**
     * Returns the name used in the manifest's {@code "format"} field.
     *
     * @return {@code "npy"}, {@code "safetensors"} or {@code "raw"}
     */
    public String jsonName() {
        return jsonName;
    }

    /**
     * Looks a format up by its manifest name (case-sensitive).
     *
     * @param name {@code "npy"}, {@code "safetensors"} or {@code "raw"}
     * @return the format
     * @throws IllegalArgumentException if the name is none of these (the message lists them)
     */
    public static ShardFormat fromJsonName(String name) {
        for (ShardFormat f : values()) {
            if (f.jsonName.equals(name)) {
                return f;
            }
        }
        throw new IllegalArgumentException("unknown shard format '" + name + "': expected one of "
                + Arrays.stream(values()).map(ShardFormat::jsonName).toList());
    }
}
